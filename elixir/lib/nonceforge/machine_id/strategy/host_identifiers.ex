defmodule Nonceforge.MachineId.Strategy.HostIdentifiers do
  @moduledoc """
  The machine id as this node's place in a fixed list of every node's
  identifiers (OTP node names, host names, FQDNs, IP addresses), read as
  NoNoncense 2.0 reads it: **as a set** — sorted in Erlang term order, so the
  order the list is written in does not matter, and a node named by several
  entries gets the place of the smallest. Old (NoNoncense) and new
  (Nonceforge) nodes of one fleet derive the same ids from the same list.

      {Nonceforge.MachineId,
       strategy: Nonceforge.MachineId.Strategy.HostIdentifiers,
       strategy_opts: [node_list: [:"app@10.0.0.1", :"app@10.0.0.2"]],
       instances: [[base_key: System.fetch_env!("BASE_KEY")]]}

  Options: `:node_list` (required, the same on every node; no entry that
  names several nodes, such as `:"nonode@nohost"`), `:ordered` (default
  `false`; `true` numbers the list in the order given, so appending never
  renumbers — Nonceforge's own rule, not NoNoncense's).
  """
  use Nonceforge.MachineId.Strategy

  @impl true
  def acquire(lease_duration, opts) do
    case machine_id(opts) do
      {:ok, id} -> {:ok, id, :static, lease_duration}
      {:error, reason} -> {:error, reason}
    end
  end

  @doc """
  This node's id from `node_list:` (and `ordered:`); raises `RuntimeError`
  when no entry names this node, as NoNoncense does.

      iex> Nonceforge.MachineId.Strategy.HostIdentifiers.id!(node_list: [:a, :b, :nonode@nohost, "1.1.1.1"])
      2
  """
  @spec id!(keyword()) :: 0..511
  def id!(opts \\ []) do
    case machine_id(opts) do
      {:ok, id} -> id
      {:error, reason} -> raise RuntimeError, reason
    end
  end

  @doc "This node's identifiers, as a sorted set: host name, FQDN, OTP node name, IP addresses."
  @spec host_identifiers() :: [atom() | String.t()]
  def host_identifiers do
    {:ok, host} = :inet.gethostname()
    host = to_string(host)

    fqdn =
      case :inet.get_rc()[:domain] do
        nil -> nil
        domain -> host <> "." <> to_string(domain)
      end

    addrs =
      case :inet.getifaddrs() do
        {:ok, ifs} ->
          for {_, props} <- ifs, {:addr, a} <- props, do: a |> :inet.ntoa() |> to_string()

        _ ->
          []
      end

    :ordsets.from_list(Enum.reject([host, fqdn, Node.self() | addrs], &is_nil/1))
  end

  defp machine_id(opts) do
    list = Keyword.get(opts, :node_list)

    cond do
      not is_list(list) or list == [] ->
        {:error, "strategy_opts :node_list must be a non-empty list"}

      Keyword.get(opts, :ordered, false) ->
        ordered(list)

      true ->
        set = :ordsets.from_list(list)

        case :ordsets.intersection(host_identifiers(), set) do
          [first | _] -> in_range(Enum.find_index(set, &(&1 == first)))
          [] -> {:error, "machine ID could not be determined"}
        end
    end
  end

  defp ordered(list) do
    mine = host_identifiers()

    case for({entry, i} <- Enum.with_index(list), entry in mine, do: {entry, i}) do
      [{_, i}] ->
        in_range(i)

      [] ->
        {:error, "machine ID could not be determined"}

      [{a, i}, {b, j} | _] ->
        {:error,
         "node_list entries #{i} (#{inspect(a)}) and #{j} (#{inspect(b)}) both name this node"}
    end
  end

  defp in_range(id) when id in 0..511, do: {:ok, id}
  defp in_range(id), do: {:error, "machine ID #{id} out of range 0-511"}
end
