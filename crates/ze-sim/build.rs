fn main() {
    // The loader dlcloses drivers while threads they started (the simulation thread) still run;
    // keep the library mapped for the life of the process.
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
