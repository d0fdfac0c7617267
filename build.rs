// Emits the linker arguments a Node addon needs (undefined napi symbols are
// resolved by the Node process at load time).
fn main() {
    napi_build::setup();
}
