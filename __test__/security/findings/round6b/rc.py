# Raw cordon-remote-v1 client helpers (black-box attack rig, round 6b).
import socket, struct, json, ssl, time, base64, os

HELLO, WELCOME, UPLOAD, SPAWN, STARTED, REFUSED = 1, 2, 3, 4, 5, 6
DATA, END, STDERR, STDERR_END, CREDIT, STOP, EXIT, PING, PONG = 0x10, 0x11, 0x12, 0x13, 0x14, 0x20, 0x21, 0x30, 0x31

def unix(path):
    s = socket.socket(socket.AF_UNIX); s.connect(path); return s

def tls(port, ca, cert=None, key=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT); ctx.load_verify_locations(ca)
    ctx.check_hostname = False
    if cert: ctx.load_cert_chain(cert, key)
    raw = socket.create_connection(('127.0.0.1', port))
    return ctx.wrap_socket(raw, server_hostname='127.0.0.1')

def frame(t, payload=b''):
    if isinstance(payload, (dict, list)): payload = json.dumps(payload).encode()
    return struct.pack('>IB', len(payload) + 1, t) + payload

def send(s, t, payload=b''): s.sendall(frame(t, payload))

def recvn(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c: raise EOFError('closed after %d/%d bytes' % (len(b), n))
        b += c
    return b

def recv(s, timeout=10):
    s.settimeout(timeout)
    L, t = struct.unpack('>IB', recvn(s, 5))
    p = recvn(s, L - 1)
    if t in (WELCOME, STARTED, REFUSED, EXIT):
        p = json.loads(p)
    return t, p

def hello(s, token=None):
    h = {'v': 1}
    if token is not None: h['token'] = token
    send(s, HELLO, h); return recv(s)

def run(s, program, args, options=None, uploads=(), timeout=30, pong=True, collect=True):
    """spawn then collect until exit; returns (started/refused, stderr bytes, data bytes, exit)"""
    for path, data in uploads:
        send(s, UPLOAD, {'path': path, 'data': base64.b64encode(data).decode()})
    send(s, SPAWN, {'program': program, 'args': args, 'options': options or {}})
    st = recv(s, timeout)
    if st[0] != STARTED: return st, b'', b'', None
    err, out, ex = b'', b'', None
    end = time.time() + timeout
    while time.time() < end:
        t, p = recv(s, timeout)
        if t == STDERR: err += p; send(s, CREDIT, bytes([1]) + struct.pack('>I', len(p)))
        elif t == DATA: out += p; send(s, CREDIT, bytes([0]) + struct.pack('>I', len(p)))
        elif t == PING and pong: send(s, PONG, p)
        elif t == EXIT: ex = p; break
    return st, err, out, ex
