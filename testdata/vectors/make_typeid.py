"""Writes typeid.json: TypeID's published conformance cases (spec v0.3.0, the
valid and invalid lists of jetify-com/typeid, read 2026-11-24), which every
face's base32 text form must follow to the letter. The valid cases' strings are
computed here from their UUIDs by this file's own base32 (not by any
implementation under test) and checked against the published strings."""
import json, os

ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def typeid(prefix, uuid_hex):
    v = int(uuid_hex.replace("-", ""), 16)
    s = ALPHABET[v >> 125] + "".join(ALPHABET[(v >> (5 * i)) & 31] for i in range(24, -1, -1))
    return (prefix + "_" if prefix else "") + s


# (name, prefix, uuid, the published TypeID)
VALID = [
    ("nil", "", "00000000-0000-0000-0000-000000000000", "00000000000000000000000000"),
    ("one", "", "00000000-0000-0000-0000-000000000001", "00000000000000000000000001"),
    ("ten", "", "00000000-0000-0000-0000-00000000000a", "0000000000000000000000000a"),
    ("sixteen", "", "00000000-0000-0000-0000-000000000010", "0000000000000000000000000g"),
    ("thirty-two", "", "00000000-0000-0000-0000-000000000020", "00000000000000000000000010"),
    ("max-valid", "", "ffffffff-ffff-ffff-ffff-ffffffffffff", "7zzzzzzzzzzzzzzzzzzzzzzzzz"),
    ("valid-alphabet", "prefix", "0110c853-1d09-52d8-d73e-1194e95b5f19", "prefix_0123456789abcdefghjkmnpqrs"),
    ("valid-uuidv7", "prefix", "01890a5d-ac96-774b-bcce-b302099a8057", "prefix_01h455vb4pex5vsknk084sn02q"),
    ("prefix-underscore", "pre_fix", "00000000-0000-0000-0000-000000000000", "pre_fix_00000000000000000000000000"),
]

# (name, string): each must be refused.
INVALID = [
    ("prefix-uppercase", "PREFIX_00000000000000000000000000"),
    ("prefix-numeric", "12345_00000000000000000000000000"),
    ("prefix-period", "pre.fix_00000000000000000000000000"),
    ("prefix-non-ascii", "pr\u00e9fix_00000000000000000000000000"),
    ("prefix-spaces", "  prefix_00000000000000000000000000"),
    ("prefix-64-chars", "abcdefghijklmnopqrstuvwxyz" * 2 + "abcdefghijkl_00000000000000000000000000"),
    ("separator-empty-prefix", "_00000000000000000000000000"),
    ("separator-empty", "_"),
    ("suffix-short", "prefix_1234567890123456789012345"),
    ("suffix-long", "prefix_123456789012345678901234567"),
    ("suffix-spaces", "prefix_1234567890123456789012345 "),
    ("suffix-uppercase", "prefix_0123456789ABCDEFGHJKMNPQRS"),
    ("suffix-hyphens", "prefix_123456789-123456789-123456"),
    ("suffix-wrong-alphabet", "prefix_ooooooiiiiiiuuuuuuulllllll"),
    ("suffix-ambiguous-crockford", "prefix_i23456789ol23456789oi23456"),
    ("suffix-hyphens-crockford", "prefix_123456789-0123456789-0123456"),
    ("suffix-overflow", "prefix_8zzzzzzzzzzzzzzzzzzzzzzzzz"),
    ("prefix-underscore-start", "_prefix_00000000000000000000000000"),
    ("prefix-underscore-end", "prefix__00000000000000000000000000"),
]


def main():
    valid = []
    for name, prefix, uuid, published in VALID:
        computed = typeid(prefix, uuid)
        assert computed == published, (name, computed, published)
        valid.append({"name": name, "typeid": computed, "prefix": prefix, "uuid": uuid})
    doc = {
        "source": "TypeID spec v0.3.0 (jetify-com/typeid spec/valid.yml, spec/invalid.yml)",
        "valid": valid,
        "invalid": [{"name": n, "typeid": s} for n, s in INVALID],
    }
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "typeid.json"), "w") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
