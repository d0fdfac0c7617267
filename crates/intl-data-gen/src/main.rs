//! `cordon-intl-data-gen`: writes the runner's ICU4X blob, or with
//! `--check-bin RUNNER` lists the markers a built runner loads that the
//! blob lacks (non-zero exit if any).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.as_slice() {
        [] => write(),
        [flag, runner] if flag == "--check-bin" => check(runner),
        _ => Err("usage: cordon-intl-data-gen [--check-bin RUNNER]".to_owned()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("cordon-intl-data-gen: {message}");
            ExitCode::FAILURE
        }
    }
}

fn write() -> Result<(), String> {
    let blob = cordon_intl_data_gen::generate().map_err(|e| e.to_string())?;
    std::fs::write(cordon_intl_data_gen::BLOB_PATH, &blob)
        .map_err(|e| format!("{}: {e}", cordon_intl_data_gen::BLOB_PATH))?;
    println!(
        "{} bytes -> {}",
        blob.len(),
        cordon_intl_data_gen::BLOB_PATH
    );
    Ok(())
}

fn check(runner: &str) -> Result<(), String> {
    let bytes = std::fs::read(runner).map_err(|e| format!("{runner}: {e}"))?;
    let missing = cordon_intl_data_gen::missing_from_blob(&bytes).map_err(|e| e.to_string())?;
    if missing.is_empty() {
        println!("every marker {runner} references is in the blob");
        return Ok(());
    }
    Err(format!(
        "{runner} references markers the blob lacks: {missing:?}"
    ))
}
