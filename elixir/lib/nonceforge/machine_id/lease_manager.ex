defmodule Nonceforge.MachineId.LeaseManager do
  @moduledoc """
  Holds this node's machine id for `Nonceforge.MachineId`: acquires it through
  the strategy (start-up blocks until then), initializes every configured
  instance with it, renews it, and when it is lost — or not renewed in time —
  disables every instance (`Nonceforge.Errors.DisabledError`), calls
  `:on_lease_lost` with the reason, and acquires again; a new id
  reinitializes the instances. On shutdown the lease is released. Options: see
  `Nonceforge.MachineId`.
  """
  use GenServer
  require Logger
  alias Nonceforge.Telemetry

  @defaults [
    strategy_opts: [],
    lease_duration: 8 * 60 * 60 * 1000,
    renew_interval: 30 * 60 * 1000,
    acquire_timeout: 60_000,
    instances: [],
    on_lease_lost: nil,
    lease_cache: nil,
    min_ttl: 30_000
  ]

  @doc false
  def start_link(opts) do
    opts = Keyword.merge(@defaults, opts)
    # init/1 blocks while acquiring: no 5 s GenServer default.
    GenServer.start_link(__MODULE__, opts, name: Keyword.fetch!(opts, :name), timeout: :infinity)
  end

  @doc "The machine id held now (`nil` while none is)."
  def machine_id(server), do: GenServer.call(server, :machine_id)

  @doc "The held lease's series (the fleet's metrics); `[]` unless a nonceforge store lease is held."
  def lease_metrics(server) do
    case GenServer.call(server, :lease) do
      {:nonceforge_lease, lease} ->
        lease |> Nonceforge.nif_lease_metrics() |> Nonceforge.Telemetry.series()

      _ ->
        []
    end
  end

  @doc "Tells the manager that its id may no longer be used (a conflict, say)."
  def lease_lost(server, reason \\ :external), do: GenServer.call(server, {:lease_lost, reason})

  @impl true
  def init(opts) do
    Process.flag(:trap_exit, true)

    state = %{
      name: opts[:name],
      strategy: opts[:strategy],
      strategy_opts: opts[:strategy_opts],
      lease_duration: opts[:lease_duration],
      renew_interval: opts[:renew_interval],
      acquire_timeout: opts[:acquire_timeout],
      instances: opts[:instances],
      on_lease_lost: opts[:on_lease_lost],
      lease_cache: opts[:lease_cache],
      min_ttl: opts[:min_ttl],
      timers: %{},
      machine_id: nil,
      lease: nil,
      leased?: false,
      expires_at: nil,
      attempt: 1,
      generation: 0
    }

    deadline =
      if state.acquire_timeout == :infinity, do: :infinity, else: now() + state.acquire_timeout

    # After a crash of this manager (not of the node), the lease it held is in
    # the tree's LeaseCache: renew that once rather than take another of the
    # 512 ids; else acquire.
    # As NoNoncense: a failed start-up is a loss (instances disabled,
    # :on_lease_lost called with :timeout, the cache cleared), then the stop.
    with :none <- resume_cached(state),
         {:ok, state} <- acquire_until(state, deadline, :initial) do
      {:ok, state}
    else
      {:ok, state} ->
        {:ok, state}

      {:error, reason} ->
        lost(state, reason)
        {:stop, :lease_acquisition_failed}
    end
  end

  defp resume_cached(%{lease_cache: nil}), do: :none

  defp resume_cached(state) do
    with %{leased?: true, machine_id: id, lease: lease} <- cached(state),
         {:ok, lease, ttl_ms} when is_integer(ttl_ms) and ttl_ms > 0 <-
           fn ->
             safely(fn ->
               state.strategy.renew(lease, state.lease_duration, state.strategy_opts)
             end)
           end
           |> Telemetry.lease_operation(:renew, %{strategy: state.strategy, source: :cache}),
         :ok <- init_instances(state, id, lease) do
      Logger.debug("Lease of ID #{id} renewed for #{ttl_ms}ms.")

      {:ok,
       renewed(%{state | machine_id: id, lease: lease, leased?: true, attempt: 1}, lease, ttl_ms)}
    else
      nil ->
        :none

      other ->
        # The instances still run on the cached id: stop them before anything else.
        Logger.debug("Failed to renew the cached lease: #{inspect(other)}")
        disable_all(state)
        put_cache(state)
        :none
    end
  end

  defp cached(%{lease_cache: nil}), do: nil

  defp cached(state) do
    Nonceforge.MachineId.LeaseCache.get(state.lease_cache)
  catch
    :exit, _ -> nil
  end

  defp put_cache(%{lease_cache: nil} = state), do: state

  defp put_cache(state) do
    Nonceforge.MachineId.LeaseCache.put(
      state.lease_cache,
      Map.take(state, [:machine_id, :lease, :leased?])
    )

    state
  catch
    :exit, _ -> state
  end

  # {:ok, state}, or the loss's reason: :timeout once the deadline passes
  # (NoNoncense's), :illegal_ttl at once for a ttl under :min_ttl.
  defp acquire_until(state, deadline, source) do
    case acquire(state, source) do
      {:ok, state} ->
        {:ok, state}

      {:error, :illegal_ttl} ->
        {:error, :illegal_ttl}

      {:error, reason} ->
        delay = backoff(state.attempt, state.renew_interval)
        Logger.warning("Acquisition failed: #{inspect(reason)}")

        if deadline != :infinity and now() + delay > deadline do
          Logger.critical("Acquisition failed, deadline exceeded.")
          {:error, :timeout}
        else
          Telemetry.lease_retry(:acquire, state.attempt, delay, reason)
          Process.sleep(delay)
          acquire_until(%{state | attempt: state.attempt + 1}, deadline, source)
        end
    end
  end

  defp acquire(state, source) do
    fn -> safely(fn -> state.strategy.acquire(state.lease_duration, state.strategy_opts) end) end
    |> Telemetry.lease_operation(:acquire, %{strategy: state.strategy, source: source})
    |> case do
      {:ok, id, lease, ttl_ms} when id in 0..511 and is_integer(ttl_ms) and ttl_ms > 0 ->
        if short?(state, lease, ttl_ms) do
          safely(fn -> state.strategy.release(lease, state.strategy_opts) end)
          {:error, :illegal_ttl}
        else
          acquired(state, id, lease, ttl_ms, source)
        end

      {:ok, id, _lease, ttl_ms} ->
        {:error,
         "strategy #{inspect(state.strategy)} gave machine id #{inspect(id)} for #{inspect(ttl_ms)} ms: ids are 0..511, ttls positive"}

      {:error, reason} ->
        {:error, reason}

      other ->
        {:error, {:bad_strategy_result, other}}
    end
  end

  # NoNoncense's minimum ttl (:min_ttl, 30 s: its schedule keeps 10 s margins);
  # a shorter grant counts as a loss, :illegal_ttl. The lease strategies here
  # are exempt: the core stops their instances at the lease's own deadline.
  defp short?(_state, {:nonceforge_lease, _}, _ttl_ms), do: false
  defp short?(state, _lease, ttl_ms), do: ttl_ms < state.min_ttl

  defp acquired(state, id, lease, ttl_ms, source) do
    case init_instances(state, id, lease) do
      :ok ->
        if source == :reacquire,
          do: Logger.info("Lease reacquired; new ID is #{id}, valid for #{ttl_ms}ms"),
          else: Logger.info("Lease of ID #{id} acquired for #{ttl_ms}ms.")

        {:ok,
         renewed(
           %{state | machine_id: id, lease: lease, leased?: true, attempt: 1},
           lease,
           ttl_ms
         )}

      {:error, reason} ->
        safely(fn -> state.strategy.release(lease, state.strategy_opts) end)
        {:error, reason}
    end
  end

  defp init_instances(state, id, lease) do
    Enum.each(state.instances, fn opts ->
      opts = Keyword.put_new(opts, :name, Nonceforge)

      case lease do
        {:nonceforge_lease, shared} -> Nonceforge.init_on_lease(opts, shared)
        _ -> Nonceforge.init(Keyword.put(opts, :machine_id, id))
      end
    end)
  rescue
    e -> {:error, Exception.message(e)}
  end

  defp instance_names(state),
    do: Enum.map(state.instances, &(Keyword.get(&1, :name) || Nonceforge))

  # Every configured instance stops issuing; one never initialized has
  # nothing to stop.
  defp disable_all(state) do
    for name <- instance_names(state) do
      try do
        Nonceforge.disable(name)
      rescue
        Nonceforge.Errors.UninitializedError -> :ok
      end
    end

    :ok
  end

  # A renewal (or the first grant): the next renewal, and the local expiry.
  defp renewed(state, lease, ttl_ms) do
    generation = state.generation + 1
    {renew_in, expire_in} = schedule(ttl_ms, state.renew_interval)
    Enum.each(state.timers, fn {_, ref} -> Process.cancel_timer(ref) end)

    timers = %{
      renew: Process.send_after(self(), {:renew, generation}, renew_in),
      expired: Process.send_after(self(), {:expired, generation}, expire_in)
    }

    %{
      state
      | lease: lease,
        leased?: true,
        expires_at: now() + ttl_ms,
        generation: generation,
        timers: timers
    }
    |> put_cache()
  end

  @doc false
  # When to renew and when to stop, for a lease granted for `ttl_ms`:
  # NoNoncense's rule for ttls of 30 s and more — the lease counts as ending
  # 10 s early, and is renewed after the renew interval or that, whichever is
  # sooner, less another 10 s. (NoNoncense refuses a shorter ttl as
  # :illegal_ttl; the lease strategies here grant them in tests and to short-
  # lived holders, so below 30 s: renew at a third, end a tenth early, at most 5 s.)
  @spec schedule(pos_integer(), pos_integer()) :: {non_neg_integer(), pos_integer()}
  def schedule(ttl_ms, renew_interval) when ttl_ms >= 30_000 do
    safe = ttl_ms - 10_000
    {max(min(renew_interval, safe) - 10_000, 0), safe}
  end

  def schedule(ttl_ms, renew_interval) do
    {min(renew_interval, max(div(ttl_ms, 3), 1)), max(ttl_ms - min(div(ttl_ms, 10), 5000), 1)}
  end

  defp lost(state, reason) do
    remaining = if state.expires_at, do: max(state.expires_at - now(), 0), else: 0
    disable_all(state)

    # NoNoncense's words (its users match them in their logs and tests).
    Logger.critical("Lease of ID #{state.machine_id} lost: #{inspect(reason)}")

    Telemetry.lease_lost(reason, remaining)
    if is_function(state.on_lease_lost, 1), do: safely(fn -> state.on_lease_lost.(reason) end)
    # Whatever is left of it goes back (a no-op for static strategies).
    if state.lease, do: safely(fn -> state.strategy.release(state.lease, state.strategy_opts) end)
    generation = state.generation + 1
    Enum.each(state.timers, fn {_, ref} -> Process.cancel_timer(ref) end)

    state =
      put_cache(%{
        state
        | leased?: false,
          machine_id: nil,
          lease: nil,
          generation: generation,
          attempt: 1,
          timers: %{}
      })

    if safely(&state.strategy.deterministic?/0) == true do
      # The same strategy would give the same id again (NoNoncense's rule).
      state
    else
      # At once, as NoNoncense; later attempts back off.
      %{state | timers: %{reacquire: Process.send_after(self(), {:reacquire, generation}, 0)}}
    end
  end

  # A callback of the user's (a strategy, on_lease_lost): what it raises or
  # exits with is logged and returned as {:error, reason}, never a crash of the
  # manager (which would drop the lease's state).
  defp safely(fun) do
    fun.()
  rescue
    e ->
      Logger.error("Nonceforge.MachineId: a callback raised: #{Exception.message(e)}")
      {:error, {:exception, e}}
  catch
    kind, reason ->
      Logger.error("Nonceforge.MachineId: a callback failed: #{inspect({kind, reason})}")
      {:error, {kind, reason}}
  end

  @impl true
  def handle_call(:machine_id, _from, state),
    do: {:reply, if(state.leased?, do: state.machine_id), state}

  def handle_call(:lease, _from, state),
    do: {:reply, if(state.leased?, do: state.lease), state}

  def handle_call({:lease_lost, reason}, _from, state),
    do: {:reply, :ok, if(state.leased?, do: lost(state, reason), else: state)}

  def handle_call(msg, _from, state) do
    Logger.warning("Nonceforge.MachineId: unknown call #{inspect(msg)}")
    {:reply, {:error, :unknown_call}, state}
  end

  @impl true
  def handle_info({msg, gen}, state)
      when msg in [:renew, :expired, :reacquire] and gen != state.generation,
      do: {:noreply, state}

  def handle_info({:renew, _}, %{leased?: true} = state) do
    fn ->
      case safely(fn ->
             state.strategy.renew(state.lease, state.lease_duration, state.strategy_opts)
           end) do
        {:error, {kind, _} = reason} when kind in [:exception, :exit, :throw, :error] ->
          {:error, :retry, reason}

        result ->
          result
      end
    end
    |> Telemetry.lease_operation(:renew, %{strategy: state.strategy, source: :scheduled})
    |> case do
      {:ok, lease, ttl_ms} when is_integer(ttl_ms) and ttl_ms > 0 ->
        if short?(state, lease, ttl_ms) do
          {:noreply, lost(state, :illegal_ttl)}
        else
          Logger.debug("Lease of ID #{state.machine_id} renewed for #{ttl_ms}ms.")
          {:noreply, renewed(%{state | attempt: 1}, lease, ttl_ms)}
        end

      {:error, :lost, reason} ->
        {:noreply, lost(state, reason)}

      other ->
        reason = with {:error, :retry, r} <- other, do: r
        retry(state, :renew, "Lease renewal", reason)
    end
  end

  def handle_info({:renew, _}, state), do: {:noreply, state}

  def handle_info({:expired, _}, state), do: {:noreply, lost(state, :expired)}

  def handle_info({:reacquire, _}, state) do
    case acquire(state, :reacquire) do
      {:ok, state} ->
        {:noreply, state}

      {:error, reason} ->
        retry(state, :reacquire, "Reacquisition", reason)
    end
  end

  # From the lease crate's watcher (Lease strategies): the core has stopped
  # the instances already; a lapse may come back, a loss will not.
  def handle_info({:nonceforge, :lease_lost, :lost}, %{leased?: true} = state),
    do: {:noreply, lost(state, lost_reason(state.lease))}

  def handle_info({:nonceforge, :lease_lost, _}, state), do: {:noreply, state}

  def handle_info(msg, state) do
    Logger.warning("Nonceforge.MachineId: unknown message #{inspect(msg)}")
    {:noreply, state}
  end

  # Why the lease crate's lease was lost: :taken, :evicted, :store_lost_data or :store_went_back.
  defp lost_reason({:nonceforge_lease, lease}),
    do: Nonceforge.nif_lease_lost_reason(lease) || :lost

  defp lost_reason(_), do: :lost

  @impl true
  def terminate(_reason, state) do
    if state.leased? do
      disable_all(state)

      fn -> safely(fn -> state.strategy.release(state.lease, state.strategy_opts) end) end
      |> Telemetry.lease_operation(:release, %{strategy: state.strategy, source: :shutdown})

      Logger.info("Lease of ID #{state.machine_id} released.")
      put_cache(%{state | leased?: false})
    end

    :ok
  end

  # A failed renewal (:renew) or reacquisition (:reacquire): logged, counted,
  # and tried again after the attempt's backoff.
  defp retry(state, step, what, reason) do
    delay = backoff(state.attempt, state.renew_interval)
    Logger.warning("#{what} failed (retry in #{delay}ms): #{inspect(reason)}")
    operation = if step == :renew, do: :renew, else: :acquire
    Telemetry.lease_retry(operation, state.attempt, delay, reason)
    Process.send_after(self(), {step, state.generation}, delay)
    {:noreply, %{state | attempt: state.attempt + 1}}
  end

  defp backoff(attempt, cap), do: min(1000 * Integer.pow(2, min(attempt - 1, 16)), max(cap, 1000))
  defp now, do: System.monotonic_time(:millisecond)
end
