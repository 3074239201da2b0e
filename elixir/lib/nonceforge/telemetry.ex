defmodule Nonceforge.Telemetry do
  @moduledoc """
  Telemetry events of machine-id management, NoNoncense 2.0's under the
  `:nonceforge` prefix, emitted through `:telemetry` when the host
  application has it loaded (it is looked up when an event fires; this
  package does not depend on it). Generating nonces is never instrumented.

  | event | measurements | metadata |
  |---|---|---|
  | `[:nonceforge, :machine_id, :lease, op, :start]` (op: `:acquire`, `:renew`, `:release`) | `:system_time`, `:monotonic_time` | `:strategy`, `:source` (`:initial`, `:reacquire`, `:scheduled`, `:shutdown`) |
  | `[:nonceforge, :machine_id, :lease, op, :stop]` | `:duration` (native units), `:ttl_ms` on success | as `:start`, and `:result` (`:ok`, `:error`, `:retry`, `:lost`) |
  | `[:nonceforge, :machine_id, :lease, :retry]` | `:attempt`, `:delay_ms` | `:operation`, `:reason` |
  | `[:nonceforge, :machine_id, :lease, :lost]` | `:remaining_ttl_ms` | `:reason` (an atom; `:strategy` for other terms) |
  | `[:nonceforge, :machine_id, :conflict_guard, :peer_checked]` | — | `:outcome` (`:different`, `:local_id_unavailable`, `:match`) |
  | `[:nonceforge, :machine_id, :conflict_guard, :conflict]` | — | `:resolution` (`:local_node`, `:remote_node`) |

  Generation itself fires no event per nonce (that would cost the hot path
  far more than the nonce). Its figures are aggregated in the core and read
  when asked: `dispatch_metrics/1`, called from a poller (the host's
  `:telemetry_poller`, `{Nonceforge.Telemetry, :dispatch_metrics, [name]}`),
  emits each series of `Nonceforge.metrics/1` as one event: the series' name
  split at `_`, all words but the last as the event, the last as the
  measurement, its labels as atoms in the metadata (with `:instance`). So
  `nonceforge_nonces_issued_total{kind, bits}` is
  `[:nonceforge, :nonces, :issued]` with `%{total: n}` and
  `%{kind: "counter", bits: "96", instance: name}`, and a
  `Telemetry.Metrics` definition such as
  `last_value("nonceforge.nonces.issued.total", tags: [:kind, :bits])` is
  exported by TelemetryMetricsPrometheus under the fleet's name.
  """

  @typedoc "One series: the fleet's metric name, its type, its labels, its value now."
  @type series :: %{
          name: String.t(),
          type: :counter | :gauge,
          labels: %{optional(atom()) => String.t()},
          value: float()
        }

  # The label names every face uses (metrics.json): atoms made once, here.
  @labels Map.new(~w(kind bits reason state failure lost_reason)a, &{Atom.to_string(&1), &1})

  @doc false
  @spec series([{String.t(), String.t(), [{String.t(), String.t()}], float()}]) :: [series()]
  def series(raw) do
    for {name, type, labels, value} <- raw do
      %{
        name: name,
        type: if(type == "counter", do: :counter, else: :gauge),
        labels: Map.new(labels, fn {k, v} -> {Map.fetch!(@labels, k), v} end),
        value: value
      }
    end
  end

  @doc """
  Emits every series of `Nonceforge.metrics/1` for instance `name` as a
  `:telemetry` event (see above); `:ok` (also when `:telemetry` is not
  loaded: nothing is emitted then).
  """
  @spec dispatch_metrics(Nonceforge.name()) :: :ok
  def dispatch_metrics(name \\ Nonceforge) do
    if telemetry?() do
      for s <- Nonceforge.metrics(name) do
        {event, measurement} = event_of(s.name)

        apply(:telemetry, :execute, [
          event,
          %{measurement => s.value},
          Map.put(s.labels, :instance, name)
        ])
      end
    end

    :ok
  end

  @doc """
  The event and measurement a series is emitted as:
  `"nonceforge_lease_renewal_max_seconds"` →
  `{[:nonceforge, :lease, :renewal, :max], :seconds}`.
  """
  @spec event_of(String.t()) :: {[atom()], atom()}
  def event_of(name) do
    words = name |> String.split("_") |> Enum.map(&String.to_atom/1)
    {Enum.drop(words, -1), List.last(words)}
  end

  @prefix [:nonceforge, :machine_id]

  defp telemetry?,
    do: Code.ensure_loaded?(:telemetry) and function_exported?(:telemetry, :execute, 3)

  defp execute(event, measurements, metadata) do
    # apply/3: :telemetry is the host application's, not a dependency of this package.
    if telemetry?(), do: apply(:telemetry, :execute, [@prefix ++ event, measurements, metadata])
    :ok
  end

  @doc false
  def lease_operation(fun, operation, metadata) do
    if telemetry?() do
      start = System.monotonic_time()

      execute(
        [:lease, operation, :start],
        %{system_time: System.system_time(), monotonic_time: start},
        metadata
      )

      result = fun.()

      execute(
        [:lease, operation, :stop],
        Map.merge(%{duration: System.monotonic_time() - start}, ttl(result)),
        Map.put(metadata, :result, result_type(result))
      )

      result
    else
      fun.()
    end
  end

  @doc false
  def lease_retry(operation, attempt, delay_ms, reason),
    do:
      execute([:lease, :retry], %{attempt: attempt, delay_ms: delay_ms}, %{
        operation: operation,
        reason: category(reason)
      })

  @doc false
  def lease_lost(reason, remaining_ttl_ms),
    do:
      execute([:lease, :lost], %{remaining_ttl_ms: remaining_ttl_ms}, %{reason: category(reason)})

  @doc false
  def peer_checked(outcome),
    do: execute([:conflict_guard, :peer_checked], %{}, %{outcome: outcome})

  @doc false
  def conflict(resolution),
    do: execute([:conflict_guard, :conflict], %{}, %{resolution: resolution})

  defp ttl({:ok, _, _, ttl_ms}) when is_integer(ttl_ms), do: %{ttl_ms: ttl_ms}
  defp ttl({:ok, _, ttl_ms}) when is_integer(ttl_ms), do: %{ttl_ms: ttl_ms}
  defp ttl(_), do: %{}

  defp result_type(:ok), do: :ok
  defp result_type(t) when is_tuple(t) and elem(t, 0) == :ok, do: :ok
  defp result_type({:error, :retry, _}), do: :retry
  defp result_type({:error, :lost, _}), do: :lost
  defp result_type(_), do: :error

  defp category(reason) when is_atom(reason), do: reason
  defp category(_), do: :strategy
end
