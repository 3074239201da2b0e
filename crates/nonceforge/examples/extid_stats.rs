//! What a million ids of the default call show, per layout: the first hex
//! digit XOR the last (the in-band key version), shared 4-byte prefixes, and
//! pairs whose visible L halves differ by their sequence numbers' XOR (what a
//! constant random half gives). `cargo run --release -p nonceforge --example
//! extid_stats [N]`; the figures in bench/RESULTS.md come from it.

use nonceforge::extid::{ExtIdCodec, Keyring};

fn main() -> Result<(), nonceforge::Error> {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("N: a number of ids"))
        .unwrap_or(1_000_000);
    let mut ring = Keyring::new(0, &[0x42; 32])?;
    ring.add(5, &[0x43; 32])?;
    ring.set_current(5)?;
    let in_band = ExtIdCodec::new(&ring, "user")?;
    let out_of_band = ExtIdCodec::builder(&ring, "user")
        .key_version_in_band(false)
        .build()?;
    println!("{n} ids of encode_seq(0..{n}), key version 5");
    println!(
        "layout | first-XOR-last: values seen, chi-square (15 df) | distinct 4-byte prefixes | L-XOR relations among the first 2000"
    );
    for (name, c) in [("in band", &in_band), ("out of band", &out_of_band)] {
        let mut counts = [0u64; 16];
        let mut prefixes = std::collections::HashSet::new();
        let mut ls = Vec::with_capacity(2000);
        for s in 0..n {
            let id = c.encode_seq(s)?.0;
            counts[((id[0] >> 4) ^ (id[15] & 0xf)) as usize] += 1;
            prefixes.insert([id[0], id[1], id[2], id[3]]);
            if s < 2000 {
                let hi = u64::from_be_bytes(id[..8].try_into().expect("8 bytes"));
                ls.push((hi >> 16) << 12 | (hi & 0xfff));
            }
        }
        let expected = n as f64 / 16.0;
        let chi2: f64 = counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        let mut xors = 0u64;
        for i in 0..ls.len() {
            for j in i + 1..ls.len() {
                if (ls[i] ^ ls[j]) & 0xff_ffff == (i ^ j) as u64 {
                    xors += 1;
                }
            }
        }
        let seen = counts.iter().filter(|&&c| c > 0).count();
        println!(
            "{name} | {seen} of 16, {chi2:.1} | {} of {n} | {xors} of {}",
            prefixes.len(),
            ls.len() * (ls.len() - 1) / 2
        );
    }
    Ok(())
}
