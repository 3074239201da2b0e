# Nonceforge in one BEAM process, one call each, beside NoNoncense 2.0's
# figures (measured elsewhere — Hex is not reachable here — on this machine
# kind: AMD EPYC Zen 5, OTP 25, one process). Every row is a loop compiled for
# that one call; the rate is the median of --runs runs of --seconds each.
#
#   cd elixir && MIX_ENV=prod mix run ../bench/elixir/bench.exs [--seconds 0.5] [--runs 5]
{opts, _, _} = OptionParser.parse(System.argv(), strict: [seconds: :float, runs: :integer])
seconds = Keyword.get(opts, :seconds, 0.5)
runs = Keyword.get(opts, :runs, 5)

key = :crypto.strong_rand_bytes(32)
:ok = Nonceforge.init(machine_id: 1, base_key: key)
:ok = Nonceforge.init(name: :native, machine_id: 2, base_key: key, mode: :nonceforge)
# The wide layout (16-bit machine ids) beside the standard one: it should cost nothing a value.
:ok =
  Nonceforge.init(
    name: :wide,
    machine_id: 40_000,
    base_key: key,
    mode: :nonceforge,
    layout: :wide
  )

:ok =
  Nonceforge.init(name: :speck, machine_id: 3, base_key: key, cipher64: :speck, cipher96: :speck)

:ok = Nonceforge.init(name: :des3, machine_id: 4, base_key: key, cipher64: :des3)

defmodule Bench.Loops do
  @moduledoc false
  # One loop a row: `name(n)` makes n calls of `expr`.
  defmacro row(name, expr) do
    quote do
      def unquote(name)(0), do: :ok

      def unquote(name)(n) do
        unquote(expr)
        unquote(name)(n - 1)
      end
    end
  end
end

defmodule Bench.Rows do
  @moduledoc false
  import Bench.Loops
  def empty, do: :ok
  row(:empty_call, empty())
  row(:strong_rand_16, :crypto.strong_rand_bytes(16))
  row(:nonce64, Nonceforge.nonce(64))
  row(:nonce96, Nonceforge.nonce(96))
  row(:nonce128, Nonceforge.nonce(128))
  row(:nonce128_named, Nonceforge.nonce(:native, 128))
  row(:nonce96_native, Nonceforge.nonce(:native, 96))
  row(:nonce96_wide, Nonceforge.nonce(:wide, 96))
  row(:sortable96_native, Nonceforge.sortable_nonce(:native, 96))
  row(:sortable96_wide, Nonceforge.sortable_nonce(:wide, 96))
  row(:sortable64, Nonceforge.sortable_nonce(64))
  row(:sortable96, Nonceforge.sortable_nonce(96))
  row(:sortable128, Nonceforge.sortable_nonce(128))
  row(:enc64_blowfish, Nonceforge.encrypted_nonce(64))
  row(:enc96_blowfish, Nonceforge.encrypted_nonce(96))
  row(:enc128_aes, Nonceforge.encrypted_nonce(128))
  row(:enc64_des3, Nonceforge.encrypted_nonce(:des3, 64))
  row(:enc64_speck, Nonceforge.encrypted_nonce(:speck, 64))
  row(:enc96_speck, Nonceforge.encrypted_nonce(:speck, 96))
  row(:enc64_native, Nonceforge.encrypted_nonce(:native, 64))
  row(:enc96_native, Nonceforge.encrypted_nonce(:native, 96))
  row(:enc128_native, Nonceforge.encrypted_nonce(:native, 128))
  row(:enc64_default, Nonceforge.encrypted_nonce(64))
  row(:enc96_default, Nonceforge.encrypted_nonce(96))
  row(:enc128_default, Nonceforge.encrypted_nonce(128))
  row(:uuidv7, Nonceforge.uuidv7())
  row(:batch_counter128, Nonceforge.nonces(Nonceforge, :counter, 128, 10_000))
end

measure = fn fun, per_call ->
  # calibrate: calls in ~1/20 of the time
  n0 = 10_000
  {t0, _} = :timer.tc(Bench.Rows, fun, [n0])
  n = max(round(n0 * seconds * 1_000_000 / max(t0, 1)), 1)

  rates =
    for _ <- 1..runs do
      {t, _} = :timer.tc(Bench.Rows, fun, [n])
      n * per_call / (t / 1_000_000)
    end

  Enum.at(Enum.sort(rates), div(runs, 2))
end

two_procs = fn fun ->
  one = measure.(fun, 1)
  n = round(one * seconds)

  rates =
    for _ <- 1..runs do
      {t, _} =
        :timer.tc(fn ->
          1..2
          |> Enum.map(fn _ -> Task.async(fn -> apply(Bench.Rows, fun, [n]) end) end)
          |> Enum.each(&Task.await(&1, :infinity))
        end)

      2 * n / (t / 1_000_000)
    end

  {one, Enum.at(Enum.sort(rates), div(runs, 2))}
end

nononcense = %{
  nonce96: 19.8e6,
  nonce128: 17.9e6,
  nonce64: 7.9e6,
  sortable64: 7.7e6,
  sortable128: 7.2e6,
  enc64_blowfish: 2.9e6,
  enc128_aes: 3.8e6,
  strong_rand_16: 1.4e6,
  empty_call: 82.0e6
}

rows = [
  {:empty_call, "an empty function call", 1},
  {:strong_rand_16, ":crypto.strong_rand_bytes(16)", 1},
  {:nonce64, "nonce(64)", 1},
  {:nonce96, "nonce(96)", 1},
  {:nonce128, "nonce(128)", 1},
  {:nonce128_named, "nonce(:name, 128)", 1},
  {:nonce96_native, "nonce(96) mode: :nonceforge, standard layout", 1},
  {:nonce96_wide, "nonce(96) mode: :nonceforge, layout: :wide", 1},
  {:sortable64, "sortable_nonce(64)", 1},
  {:sortable96, "sortable_nonce(96)", 1},
  {:sortable128, "sortable_nonce(128)", 1},
  {:sortable96_native, "sortable_nonce(96) mode: :nonceforge, standard layout", 1},
  {:sortable96_wide, "sortable_nonce(96) mode: :nonceforge, layout: :wide", 1},
  {:enc64_blowfish, "encrypted_nonce(64) Blowfish (NoNoncense mode)", 1},
  {:enc96_blowfish, "encrypted_nonce(96) Blowfish + 32 zero bits", 1},
  {:enc128_aes, "encrypted_nonce(128) AES-256 (NoNoncense mode)", 1},
  {:enc64_des3, "encrypted_nonce(64) 3DES", 1},
  {:enc64_speck, "encrypted_nonce(64) Speck64/128 (NoNoncense mode)", 1},
  {:enc96_speck, "encrypted_nonce(96) Speck96/144 (NoNoncense mode)", 1},
  {:enc64_native, "encrypted_nonce(64) mode: :nonceforge (Speck)", 1},
  {:enc96_native, "encrypted_nonce(96) mode: :nonceforge (Speck)", 1},
  {:enc128_native, "encrypted_nonce(128) mode: :nonceforge (AES)", 1},
  {:uuidv7, "uuidv7()", 1},
  {:batch_counter128, "nonces(:counter, 128, 10000), per nonce", 10_000}
]

IO.puts(
  "OTP #{System.otp_release()}, Elixir #{System.version()}, #{System.schedulers_online()} schedulers; #{runs} runs of #{seconds} s, medians"
)

IO.puts("| call | Nonceforge (M/s) | NoNoncense 2.0 (M/s, measured elsewhere) | ratio |")
IO.puts("|---|---:|---:|---:|")

for {fun, label, per_call} <- rows do
  rate = measure.(fun, per_call)
  theirs = nononcense[fun]

  {t, r} =
    if theirs,
      do:
        {:erlang.float_to_binary(theirs / 1.0e6, decimals: 1),
         :erlang.float_to_binary(rate / theirs, decimals: 2) <> "×"},
      else: {"—", "—"}

  IO.puts("| #{label} | #{:erlang.float_to_binary(rate / 1.0e6, decimals: 1)} | #{t} | #{r} |")
end

# The default instance again, now in :nonceforge mode (Speck64/128, Speck96/144,
# AES-256 with the core's keys): `Nonceforge.encrypted_nonce(bits)` as most
# code calls it.
:ok = Nonceforge.init(machine_id: 1, base_key: key, mode: :nonceforge)
IO.puts("\nThe default instance in mode: :nonceforge:")

for {fun, label} <- [
      {:enc64_default, "encrypted_nonce(64) (Speck64/128)"},
      {:enc96_default, "encrypted_nonce(96) (Speck96/144)"},
      {:enc128_default, "encrypted_nonce(128) (AES-256)"}
    ] do
  IO.puts("| #{label} | #{:erlang.float_to_binary(measure.(fun, 1) / 1.0e6, decimals: 1)} |")
end

IO.puts("\nTwo processes at once (goal ≥ 1.6× one):")

for fun <- [:nonce128, :sortable128, :enc128_default, :enc64_default] do
  {one, two} = two_procs.(fun)

  IO.puts(
    "| #{fun} | one #{:erlang.float_to_binary(one / 1.0e6, decimals: 1)} M/s | two #{:erlang.float_to_binary(two / 1.0e6, decimals: 1)} M/s | #{:erlang.float_to_binary(two / one, decimals: 2)}× |"
  )
end
