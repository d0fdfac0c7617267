'use strict';

// A session's warm sandbox: one long-lived spawnIsolated run over the
// session workspace whose program is cordon-exec-agent, driven over fd 3
// (session-exec-v1, agent-frames.js). Steps of start(): spawn → wait for
// READY (bounded) → serve. The agent shares the sandbox with the commands
// it runs, so it is untrusted: a frame that lies, a channel that closes, or
// an agent that exits ends the whole sandbox (first cause wins) and every
// pending command rejects with ERR_CORDON_SESSION_AGENT_FAILED.

const os = require('node:os');
const { CordonError } = require('../errors');
const { KIND, encodeFrame, AgentFrameDecoder, MAX_CHUNK_BYTES } = require('./agent-frames');
const { SessionCommand } = require('./command');
const { CommandLog } = require('./command-log');

/** How long the agent has to say READY (ms): a static binary starts in milliseconds. */
const READY_TIMEOUT_MS = 10_000;
/** After SIGKILL to a command's group, how long its EXIT may take (ms) before the agent is judged broken. */
const KILL_REPORT_MS = 5_000;
/** Stderr of the agent kept for the failure message (bytes). */
const AGENT_STDERR_BYTES = 4096;
/** Stop ladder of the session sandbox (ms): commands get a short grace. */
const SANDBOX_STOP = Object.freeze({ graceMs: 500, forceMs: 2000 });
const PROTOCOL = 'session-exec-v1';

const SIGNAL_NAMES = Object.fromEntries(Object.entries(os.constants.signals).map(([name, number]) => [number, name]));

function agentFailed(message, cause) {
  return new CordonError('ERR_CORDON_SESSION_AGENT_FAILED', message, cause === undefined ? {} : { cause });
}

class SessionSandbox {
  /**
   * @param {{spawnIsolated: Function, agentPath: string, policy: object, workspace: string,
   *   workspaceBytes: number, maxCommands: number, onFailure: (error: Error) => void}} spec
   */
  constructor(spec) {
    this._spec = spec;
    this._commands = new Map();
    this._nextId = 1;
    this._failure = null;
    this._stopping = false;
    this._stderrTail = Buffer.alloc(0);
    this._decoder = new AgentFrameDecoder((frame) => this._onFrame(frame));
    /** The commands for the session receipt, bounded (command-log.js). */
    this.log = new CommandLog();
  }

  /** Spawns the sandbox and resolves once the agent said READY. */
  async start() {
    const { spawnIsolated, agentPath, policy, workspace, workspaceBytes, holder } = this._spec;
    // A non-root provider's sandbox starts inside the workspace holder's namespaces (holder.js).
    // The workspace tmpfs counts against the sandbox's memory: the launcher shrinks /tmp and
    // /dev/shm so that the three full leave the agent and a command a quarter of the ceiling.
    const options = { policy, workspace, workspaceTmpfsBytes: workspaceBytes, stop: SANDBOX_STOP, namespaceHolder: holder };
    this.execution = spawnIsolated([agentPath], options);
    const ready = new Promise((resolve, reject) => {
      this._ready = { resolve, reject };
    });
    const timer = setTimeout(() => this._fail(agentFailed(`the exec agent did not say READY within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    this.execution.protocol.on('data', (chunk) => {
      try {
        this._decoder.push(chunk);
      } catch (error) {
        this._fail(error);
      }
    });
    this.execution.protocol.on('end', () => this._fail(agentFailed(`the exec agent closed its channel${this._decoder.partial ? ' mid-frame' : ''}`)));
    this.execution.protocol.on('error', (error) => this._fail(agentFailed(`the session channel failed: ${error.message}`, error)));
    this.execution.stderr.on('data', (chunk) => {
      this._stderrTail = Buffer.concat([this._stderrTail, chunk]).subarray(-AGENT_STDERR_BYTES);
    });
    this._settled = this.execution.wait().then(
      (result) => {
        this._fail(agentFailed(`the session sandbox ended (${result.signal ?? `exit ${result.returncode}`})`));
        return result;
      },
      (error) => {
        this._fail(agentFailed(`the session sandbox failed: ${error.message}`, error));
        return { returncode: null, signal: null, receipt: error?.details?.receipt ?? {} };
      },
    );
    try {
      await ready;
    } finally {
      clearTimeout(timer);
    }
  }

  get failure() {
    return this._failure;
  }

  get running() {
    return this._commands.size;
  }

  _fail(error) {
    if (this._failure !== null) return;
    const tail = this._stderrTail.toString('utf8').trim();
    this._failure = this._stopping ? new CordonError('ERR_CORDON_SESSION_ENDED', 'the session ended') : error;
    if (!this._stopping && tail) this._failure.message += ` (agent stderr: ${tail.slice(-512)})`;
    this._ready?.reject(this._failure);
    for (const command of this._commands.values()) command.fail(this._failure);
    this._commands.clear();
    this.execution?.stop();
    if (!this._stopping) this._spec.onFailure(this._failure);
  }

  _onFrame(frame) {
    if (frame.kind === KIND.READY) {
      let hello = null;
      try {
        hello = JSON.parse(frame.text);
      } catch {
        // judged below
      }
      if (hello?.protocol !== PROTOCOL || this._ready === null) throw agentFailed(`unexpected READY ${frame.text.slice(0, 100)}`);
      this._ready.resolve();
      this._ready = null;
      return;
    }
    if (this._ready !== null) throw agentFailed('a frame before READY');
    if (frame.id === 0 || frame.id >= this._nextId) throw agentFailed(`a frame for command ${frame.id}, which the host never started`);
    const command = this._commands.get(frame.id);
    if (command === undefined) return; // settled: late output is dropped
    if (frame.kind === KIND.STARTED) {
      if (command.pid !== undefined) throw agentFailed(`a second STARTED for command ${frame.id}`);
      command.pid = frame.pid;
      command.onStarted?.();
    } else if (frame.kind === KIND.STDIN_ACK) {
      if (!command.stdinAcked()) throw agentFailed(`a STDIN_ACK for command ${frame.id}, which has no stdin chunk in flight`);
    } else if (frame.kind === KIND.STDOUT) command.output('stdout', frame.chunk);
    else if (frame.kind === KIND.STDERR) command.output('stderr', frame.chunk);
    else if (frame.kind === KIND.EXIT) this._onExit(command, frame);
  }

  _onExit(command, frame) {
    this._commands.delete(command.id);
    if (frame.exitKind === 'spawn-failed') {
      command.fail(new CordonError('ERR_CORDON_SESSION_COMMAND_FAILED', `the command could not be started: ${frame.message}`));
      command.onStarted?.();
      return;
    }
    if (command.pid === undefined) throw agentFailed(`EXIT for command ${command.id} before STARTED`);
    const signaled = frame.exitKind === 'signaled';
    command.finish({ exitCode: signaled ? null : frame.value, signal: signaled ? (SIGNAL_NAMES[frame.value] ?? `SIG${frame.value}`) : null });
  }

  /**
   * Starts a command; resolves once the agent reported its pid.
   * @param {{argv: string[], cwd: string, env: [string, string][], stdin?: Buffer, timeoutMs?: number,
   *   outputBytes: number, onStdout?: Function, onStderr?: Function}} spec
   */
  async run(spec) {
    if (this._failure !== null || this._stopping) throw new CordonError('ERR_CORDON_SESSION_ENDED', 'the session has ended', { cause: this._failure ?? undefined });
    if (this._commands.size >= this._spec.maxCommands) {
      throw new CordonError('ERR_CORDON_SESSION_BUSY', `the session already runs ${this._spec.maxCommands} commands (maxCommands): wait for one to finish`);
    }
    const command = new SessionCommand({ id: this._nextId, ...spec });
    this._nextId += 1;
    this._commands.set(command.id, command);
    this.log.add(command);
    const started = new Promise((resolve) => {
      command.onStarted = resolve;
    });
    // outputBytes: the agent forwards no output past it (R11-5), see command.rs.
    const request = { argv: spec.argv, cwd: spec.cwd, env: spec.env, stdin: spec.stdin !== undefined, outputBytes: spec.outputBytes };
    this._send(KIND.EXEC, command.id, Buffer.from(JSON.stringify(request), 'utf8'));
    if (spec.stdin !== undefined) this._feedStdin(command, spec.stdin.stream);
    command.armTimeout(spec.timeoutMs, () => this.kill(command, 9));
    await Promise.race([started, command.done]);
    return command;
  }

  /**
   * Streams `source` (bytes, strings, a Readable, any iterable) to the
   * command's stdin in chunks of at most MAX_CHUNK_BYTES, one at a time:
   * the next is sent after the agent's STDIN_ACK, so the host holds one
   * chunk and the agent one, however fast the source and however slow the
   * reader. Ends with an empty STDIN (stdin closed); stops when the command
   * settles. A source that throws closes stdin the same way.
   */
  async _feedStdin(command, source) {
    try {
      for await (const piece of source) {
        const bytes = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
        for (let at = 0; at < bytes.length; at += MAX_CHUNK_BYTES) {
          if (command.settled || this._failure !== null) return;
          const acked = command.expectStdinAck();
          this._send(KIND.STDIN, command.id, bytes.subarray(at, at + MAX_CHUNK_BYTES));
          await acked;
        }
      }
    } catch {
      // The caller's source failed: its command sees end of input.
    }
    if (!command.settled && this._failure === null) this._send(KIND.STDIN, command.id, Buffer.alloc(0));
  }

  /** Signals a command's process group; a SIGKILL whose EXIT never comes ends the session. */
  kill(command, signal) {
    if (command.settled || this._failure !== null) return;
    this._send(KIND.SIGNAL, command.id, Buffer.from([signal]));
    if (signal !== 9) return;
    const watchdog = setTimeout(() => {
      if (!command.settled) this._fail(agentFailed(`the exec agent did not report command ${command.id} killed within ${KILL_REPORT_MS} ms`));
    }, KILL_REPORT_MS);
    watchdog.unref?.();
    command.done.then(() => clearTimeout(watchdog), () => clearTimeout(watchdog));
  }

  _send(kind, id, payload) {
    this.execution.protocol.write(encodeFrame(kind, id, payload));
  }

  /** Stops the whole sandbox with the stop ladder; resolves with its wait() result. Idempotent. */
  async stop() {
    this._stopping = true;
    this._fail(new CordonError('ERR_CORDON_SESSION_ENDED', 'the session ended'));
    return this._settled ?? { returncode: null, signal: null, receipt: {} };
  }

  /** Resolves with the sandbox's wait() result whenever it ends. */
  get settled() {
    return this._settled;
  }
}

module.exports = { SessionSandbox, PROTOCOL };
