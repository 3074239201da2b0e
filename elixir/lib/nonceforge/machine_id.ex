defmodule Nonceforge.MachineId do
  @moduledoc """
  Machine ids for `Nonceforge.init/1`, by NoNoncense's strategies.

      iex> Nonceforge.MachineId.id!(7)
      7
      iex> System.put_env("POD_NAME", "worker-12")
      iex> Nonceforge.MachineId.id!({:env, "POD_NAME"})
      12
      iex> Nonceforge.MachineId.id!({:node_list, ["10.9.9.9", "127.0.0.1"]})
      1

  | spec | the id |
  |---|---|
  | an integer | itself (0..511) |
  | `{:env, var}` | the number at the end of the environment variable's value (`worker-12` → 12), as the core's `MachineId::from_env` reads it |
  | `{:node_list, list}` | this node's position in `list`, in the order given — appending never renumbers. Entries are OTP node names (atoms) or host names and IP addresses (strings); the first entry that names this node wins, and two entries naming it are an error |

  Leases (`{:lease, url, opts}`) are taken by `Nonceforge.init/1` itself.
  Every member of a cluster must get a different id: a fleet that mixes
  languages shares the 0..511 range (plan ranges, or lease).
  """

  @type spec :: 0..511 | {:env, String.t()} | {:node_list, [atom() | String.t()]}

  @doc "The machine id that `spec` gives this node; raises `ArgumentError` if there is none."
  @spec id!(spec()) :: 0..511
  def id!(id) when is_integer(id) and id in 0..511, do: id

  def id!(id) when is_integer(id),
    do: raise(ArgumentError, "machine_id must be in 0..511, got: #{id}")

  def id!({:env, var}) when is_binary(var) do
    value =
      System.get_env(var) ||
        raise ArgumentError, "machine_id: environment variable #{var} is not set"

    case Regex.run(~r/(\d+)$/, value) do
      [_, digits] -> id!(String.to_integer(digits))
      _ -> raise ArgumentError, "machine_id: #{var}=#{inspect(value)} does not end in a number"
    end
  end

  def id!({:node_list, list}) when is_list(list) and list != [] do
    mine = MapSet.new(host_identifiers())

    hits =
      list
      |> Enum.with_index()
      |> Enum.filter(fn {entry, _} -> MapSet.member?(mine, normalize(entry)) end)

    case hits do
      [] ->
        raise ArgumentError,
              "machine_id: none of the node list's entries names this node (#{inspect(host_identifiers())})"

      [{_, index}] ->
        id!(index)

      [{a, i}, {b, j} | _] ->
        raise ArgumentError,
              "machine_id: node list entries #{i} (#{inspect(a)}) and #{j} (#{inspect(b)}) both name this node"
    end
  end

  def id!(spec),
    do:
      raise(
        ArgumentError,
        "machine_id must be 0..511, {:env, var}, {:node_list, list} or {:lease, url, opts}, got: #{inspect(spec)}"
      )

  defp normalize(entry) when is_atom(entry), do: entry
  defp normalize(entry) when is_binary(entry), do: String.downcase(entry)
  defp normalize(entry), do: entry

  @doc "This node's names: its OTP node name, host name, and IP addresses."
  @spec host_identifiers() :: [atom() | String.t()]
  def host_identifiers do
    {:ok, host} = :inet.gethostname()

    addrs =
      case :inet.getifaddrs() do
        {:ok, ifs} ->
          for {_, props} <- ifs, {:addr, a} <- props, do: a |> :inet.ntoa() |> to_string()

        _ ->
          []
      end

    [Node.self(), String.downcase(to_string(host)) | addrs] |> Enum.uniq()
  end
end
