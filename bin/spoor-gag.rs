fn main() {
    eprintln!("spoor-gag: being written");
    std::process::exit(2);
}
