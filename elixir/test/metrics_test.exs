defmodule Nonceforge.MetricsTest do
  # The fleet's series from an instance (Nonceforge.metrics/1), readiness, and
  # their :telemetry events (test/support/telemetry.ex stands in for the
  # library). Not async: the stand-in forwards to one registered listener.
  use ExUnit.Case, async: false

  @key :binary.copy(<<7>>, 32)

  # metrics.json's families: name => {type, labels}, read by pattern (no JSON module here).
  defp fleet do
    # The generator's and the lease's families ("metrics"; the sanitizer's follow, not here).
    [text | _] =
      File.read!(Path.expand("../../testdata/vectors/metrics.json", __DIR__))
      |> String.split("\"sanitizer_metrics\"")

    for [_, name, type, labels] <-
          Regex.scan(~r/"name": "(\w+)", "type": "(\w+)", "labels": \[([^\]]*)\]/, text),
        into: %{} do
      {name,
       {String.to_atom(type),
        for([_, l] <- Regex.scan(~r/"(\w+)"/, labels), do: String.to_atom(l)) |> Enum.sort()}}
    end
  end

  test "every series is one of the fleet's, with its type and labels" do
    :ok = Nonceforge.init(name: :metrics_fleet, machine_id: 9, base_key: @key)
    fleet = fleet()
    assert map_size(fleet) == 24
    series = Nonceforge.metrics(:metrics_fleet)
    # The generator's 16 series (no deadline, no lease).
    assert length(series) == 16

    for s <- series do
      assert {type, labels} = Map.fetch!(fleet, s.name)
      assert s.type == type
      assert s.labels |> Map.keys() |> Enum.sort() == labels
    end
  end

  # Single calls take their ticks from a block per scheduler thread (the core's
  # LocalNonces), counted when the block is reserved; sortable 96- and 128-bit
  # nonces come from per-thread sequences, counted once a millisecond. Sortable
  # 64-bit nonces and batches are counted exactly.
  test "what is issued and refused is counted, by kind, size and reason" do
    n = :metrics_counts
    :ok = Nonceforge.init(name: n, machine_id: 9, base_key: @key)
    for _ <- 1..10, do: Nonceforge.nonce(n, 64)
    for _ <- 1..4, do: Nonceforge.encrypted_nonce(n, 128)
    for _ <- 1..3, do: Nonceforge.sortable_nonce(n, 64)
    _ = Nonceforge.nonces(n, :counter, 96, 100)
    Nonceforge.disable(n)
    assert_raise Nonceforge.Errors.DisabledError, fn -> Nonceforge.nonce(n, 64) end
    assert {:error, _} = Nonceforge.readiness(n)

    value = fn name, labels ->
      Enum.find(Nonceforge.metrics(n), &(&1.name == name and &1.labels == labels)).value
    end

    threads = :erlang.system_info(:schedulers) + :erlang.system_info(:dirty_cpu_schedulers)
    issued_64 = value.("nonceforge_nonces_issued_total", %{kind: "counter", bits: "64"})
    assert issued_64 >= 10 and issued_64 <= 10 + 256 * threads
    issued_128 = value.("nonceforge_nonces_issued_total", %{kind: "counter", bits: "128"})
    assert issued_128 >= 4 and issued_128 <= 4 + 65_536 * threads
    assert value.("nonceforge_nonces_issued_total", %{kind: "sortable", bits: "64"}) == 3
    assert value.("nonceforge_nonces_issued_total", %{kind: "counter", bits: "96"}) == 100
    assert value.("nonceforge_refusals_total", %{reason: "disabled"}) == 1
    assert value.("nonceforge_generator_enabled", %{}) == 0
    Nonceforge.enable(n)
    assert Nonceforge.readiness(n) == :ok
    assert value.("nonceforge_generator_enabled", %{}) == 1
  end

  test "dispatch_metrics emits each series as an event named after it" do
    n = :metrics_events
    :ok = Nonceforge.init(name: n, machine_id: 9, base_key: @key)
    _ = Nonceforge.sortable_nonce(n, 64)
    Process.register(self(), :telemetry_listener)
    assert Nonceforge.Telemetry.dispatch_metrics(n) == :ok

    assert_receive {:telemetry, [:nonceforge, :nonces, :issued], %{total: 1.0},
                    %{kind: "sortable", bits: "64", instance: ^n}}

    assert_receive {:telemetry, [:nonceforge, :epoch, :headroom], %{seconds: s}, %{instance: ^n}}
    assert s > 100 * 365 * 86_400

    assert Nonceforge.Telemetry.event_of("nonceforge_lease_renewal_max_seconds") ==
             {[:nonceforge, :lease, :renewal, :max], :seconds}
  end
end
