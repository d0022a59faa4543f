fn main() {
    eprintln!("spoor-whatif: being written");
    std::process::exit(2);
}
