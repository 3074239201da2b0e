//! The process-wide generator (its own test binary: global state).

use nonceforge::{Error, MachineId, NonceGenerator};

#[test]
fn uninitialised_then_initialised_once() {
    assert_eq!(nonceforge::global().unwrap_err(), Error::Uninitialised);
    assert!(
        nonceforge::global()
            .unwrap_err()
            .to_string()
            .contains("nonceforge::init")
    );
    let g = NonceGenerator::builder(MachineId::new(2).unwrap())
        .build()
        .unwrap();
    nonceforge::init(g.clone()).unwrap();
    assert_eq!(nonceforge::init(g), Err(Error::AlreadyInitialised));
    let n = nonceforge::global().unwrap().counter_96().unwrap();
    assert_eq!(
        nonceforge::global()
            .unwrap()
            .decompose(&n)
            .unwrap()
            .machine_id,
        2
    );
}
