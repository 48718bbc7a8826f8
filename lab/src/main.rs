fn main() { println!("disruptor-vs-lbq"); }
