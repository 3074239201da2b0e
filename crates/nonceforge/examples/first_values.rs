//! The demo's first values: every kind of nonce and id, straight from the
//! core crate (no database, no network, nothing to install), so that `make
//! demo` shows values within minutes of a fresh clone, before it builds the
//! command-line tool and the other faces. `cargo run -p nonceforge --example
//! first_values`. The key is drawn here and dropped at exit (never printed):
//! real keys come from a secret store.

use nonceforge::extid::{ExtIdCodec, Keyring, TextForm};
use nonceforge::{MachineId, NonceGenerator, uuid};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn main() -> Result<(), nonceforge::Error> {
    let mut demo_key = [0u8; 32];
    getrandom::fill(&mut demo_key).expect("the OS random source");
    let generator = NonceGenerator::builder(MachineId::new(7)?)
        .key(&demo_key)
        .build()?;
    println!("== counter nonces (64, 96, 128 bits), machine id 7: two of each");
    for _ in 0..2 {
        println!(
            "{}  {}  {}",
            hex(&generator.counter_64()?),
            hex(&generator.counter_96()?),
            hex(&generator.counter_128()?)
        );
    }
    println!("== sortable nonces (strictly increasing; each carries its millisecond)");
    let sortable = generator.sortable_128()?;
    println!(
        "{}  {}  {}",
        hex(&generator.sortable_64()?),
        hex(&generator.sortable_96()?),
        hex(&sortable)
    );
    println!("   {:?}", generator.decompose(&sortable)?);
    println!("== encrypted nonces (Speck64/128, Speck96/144, AES-256): unpredictable");
    let secret = generator.encrypted_128()?;
    println!(
        "{}  {}  {}",
        hex(&generator.encrypted_64()?),
        hex(&generator.encrypted_96()?),
        hex(&secret)
    );
    println!("   decrypted: {}", hex(&generator.decrypt_128(&secret)?));
    println!("== time-prefixed ids: UUIDv7, tuid6 (compact), stuid");
    println!(
        "{}  {}  {}",
        nonceforge::extid::ExtId(uuid::uuidv7()),
        uuid::to_compact(&uuid::tuid6()),
        hex(&uuid::stuid())
    );
    println!("== external ids: user 42 as a UUIDv8 and as TypeID-like base32, and back");
    let users = ExtIdCodec::new(&Keyring::new(0, &demo_key)?, "user")?;
    let id = users.encode_seq(42)?;
    let text = users.format(&id, TextForm::Base32, true, true);
    println!(
        "{id}  {text}  → seq {}",
        users.decode_seq(&users.parse(&text)?)?
    );
    Ok(())
}
