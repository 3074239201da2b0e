defmodule Nonceforge.LeaseOptions do
  @moduledoc false
  # The lease options Elixir takes (init/1's :lease, Nonceforge.MachineId's
  # lease strategy), checked before they reach the NIF: every refusal names
  # the option and its rule.

  @doc "The store's URL, checked for its scheme (the lease crate parses the rest)."
  @spec check_url(term()) :: String.t()
  def check_url(url) when is_binary(url) do
    if String.starts_with?(url, ["postgres://", "postgresql://", "redis://", "etcd://"]),
      do: url,
      else: raise(ArgumentError, "lease url must start with postgres://, redis:// or etcd://")
  end

  def check_url(url),
    do: raise(ArgumentError, "lease url must be a string, got: #{Kernel.inspect(url)}")

  @lease_opts ~w(ttl renew_every margin connect_timeout ids namespace holder pg_schema fast_start)a
  @doc """
  The lease options of `init/1`'s `:lease` and the lease strategy, checked and
  turned into the NIF's map; an option left out is nil there: the lease crate's
  default (stated there once).
  """
  @spec from_keyword(term(), :standard | :wide) :: map()
  def from_keyword(opts, layout \\ :standard)

  def from_keyword(opts, layout) when is_list(opts) and layout in [:standard, :wide] do
    case Keyword.keys(opts) -- @lease_opts do
      [] ->
        :ok

      unknown ->
        raise ArgumentError,
              "unknown lease option(s) #{Kernel.inspect(unknown)}; known: #{Kernel.inspect(@lease_opts)}"
    end

    ms = fn key, default ->
      case Keyword.get(opts, key, default) do
        nil ->
          nil

        v when is_integer(v) and v > 0 and v < 86_400_000 ->
          v

        v ->
          raise ArgumentError,
                "lease option #{key} must be milliseconds (1..86399999), got: #{Kernel.inspect(v)}"
      end
    end

    # What is left out is nil: the lease crate's default (stated there once).
    ids = Keyword.get(opts, :ids)
    top = if layout == :wide, do: 65_535, else: 511

    {first, last} =
      case ids do
        nil ->
          {nil, nil}

        a..b//1 when is_integer(a) and is_integer(b) and 0 <= a and a <= b and b <= top ->
          {a, b}

        _ ->
          raise ArgumentError,
                "lease option ids must be a range within 0..#{top}#{if layout == :wide, do: " (layout: :wide)", else: ""}, got: #{Kernel.inspect(ids)}"
      end

    namespace = Keyword.get(opts, :namespace)

    unless is_nil(namespace) or is_binary(namespace),
      do: raise(ArgumentError, "lease option namespace must be a string")

    holder = Keyword.get(opts, :holder)

    unless is_nil(holder) or is_binary(holder),
      do: raise(ArgumentError, "lease option holder must be a string")

    pg_schema = Keyword.get(opts, :pg_schema)

    unless is_nil(pg_schema) or is_binary(pg_schema),
      do: raise(ArgumentError, "lease option pg_schema must be a string")

    fast_start =
      case Keyword.get(opts, :fast_start) do
        nil ->
          nil

        f when f in [:off, :verify, :declared] ->
          Atom.to_string(f)

        f ->
          raise ArgumentError,
                "lease option fast_start must be :off, :verify or :declared, got: #{Kernel.inspect(f)}"
      end

    %{
      ttl_ms: ms.(:ttl, nil),
      renew_every_ms: ms.(:renew_every, nil),
      margin_ms: ms.(:margin, nil),
      connect_timeout_ms: ms.(:connect_timeout, nil),
      ids_first: first,
      ids_last: last,
      namespace: namespace,
      holder: holder,
      pg_schema: pg_schema,
      fast_start: fast_start,
      layout: Atom.to_string(layout)
    }
  end

  def from_keyword(opts, _layout),
    do: raise(ArgumentError, "lease options must be a keyword list, got: #{Kernel.inspect(opts)}")
end
