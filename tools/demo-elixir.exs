# make demo's Elixir part: Nonceforge (the NoNoncense drop-in) on the same
# core, machine id 7, each value labelled with the call that made it.
Nonceforge.init(machine_id: 7, base_key: :crypto.strong_rand_bytes(32))
show = fn label, value -> IO.puts(String.pad_trailing(label, 22) <> Base.encode16(value, case: :lower)) end
for b <- [64, 96, 128], do: show.("nonce(#{b})", Nonceforge.nonce(b))
show.("sortable_nonce(96)", Nonceforge.sortable_nonce(96))
show.("encrypted_nonce(128)", Nonceforge.encrypted_nonce(128))

IO.puts(
  "(a counter and a sortable nonce made in one millisecond may share bytes: each kind is unique within itself, so use one kind per key)"
)
