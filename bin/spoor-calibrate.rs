fn main() {
    eprintln!("spoor-calibrate: being written");
    std::process::exit(2);
}
