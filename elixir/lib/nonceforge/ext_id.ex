defmodule Nonceforge.ExtId do
  @moduledoc """
  Opaque external ids from internal sequential ids, and back: the core's
  codec (feistel-uuid by default — a UUID-shaped id whose key version travels
  in band), the same bytes as the Rust crate, the CLI, PostgreSQL, Node and Go
  give for the same key and type.

      iex> codec = Nonceforge.ExtId.new(:binary.copy(<<1>>, 32), "user")
      iex> id = Nonceforge.ExtId.encode(codec, 42)
      iex> Nonceforge.ExtId.decode_seq(codec, id)
      42
      iex> Nonceforge.ExtId.info(codec, id).derived
      true
      iex> text = Nonceforge.ExtId.format(codec, id, :base32, prefix: true, check: true)
      iex> Nonceforge.ExtId.parse(codec, text) == id
      true

  `encode/2` derives the random half from `seq` under the key — the same call,
  and the same id, as every other face's call without a random half: ids are
  stable, look uniformly random, and `decode/3` and `decode_seq/3` refuse ids
  this codec did not make (`info/3`'s `:derived` says the same without
  raising). `encode/3` is the Plan B post's design: a fresh random `rand` per
  row (`:crypto.strong_rand_bytes/1`, < 2^62), stored beside it, read back with
  `decode_unverified/3` and compared with the row's — never a constant
  (2-round ids of one `rand` show the XOR of their sequence numbers).

  Keys rotate with a keyring: every version decodes, new ids take `:current`.

      iex> old = :binary.copy(<<1>>, 32)
      iex> before = Nonceforge.ExtId.new(old, "user")
      iex> id = Nonceforge.ExtId.encode(before, 7)
      iex> ring = %{current: 1, keys: %{0 => old, 1 => :binary.copy(<<2>>, 32)}}
      iex> rotated = Nonceforge.ExtId.new(ring, "user")
      iex> Nonceforge.ExtId.info(rotated, id).key_version
      0
      iex> Nonceforge.ExtId.info(rotated, Nonceforge.ExtId.encode(rotated, 7)).key_version
      1

  A codec is a reference to a NIF resource, freed when nothing holds it.
  """

  @enforce_keys [:ref, :type]
  defstruct [:ref, :type]
  @type t :: %__MODULE__{ref: reference(), type: String.t()}

  @typedoc "Master keys by version (0..15), `:current` the one new ids are made with."
  @type keyring :: %{current: 0..15, keys: %{optional(0..15) => binary()}}

  @doc """
  A codec for ids of `type` (lower-case letters and underscores, as TypeID's
  prefixes) under the master `key` (at least 32 bytes) or a keyring
  (`%{current: v, keys: %{version => key}}`).

  Options: `:key_version` (0..15, default 0; a single key's version),
  `:mode` (`:feistel_uuid`, `:aes128`, `:cycle_walk`), `:rounds` (2 or 4,
  feistel-uuid), `:uuid_version` (8 or 4, feistel-uuid),
  `:key_version_in_band` (default true; false: 60-bit sequence numbers, the
  post's layout, the key version kept beside the id and given to `info/3`).
  """
  @spec new(binary() | keyring(), String.t(), keyword()) :: t()
  def new(key, type, opts \\ [])

  def new(key, type, opts) when is_binary(type) and is_list(opts) do
    version = Keyword.get(opts, :key_version, 0)
    mode = Keyword.get(opts, :mode, :feistel_uuid)
    rounds = Keyword.get(opts, :rounds, 2)
    uuid_version = Keyword.get(opts, :uuid_version, 8)
    in_band = Keyword.get(opts, :key_version_in_band, true)

    unless version in 0..15,
      do: raise(ArgumentError, "key_version must be in 0..15, got: #{inspect(version)}")

    unless rounds in [2, 4],
      do: raise(ArgumentError, "rounds must be 2 or 4, got: #{inspect(rounds)}")

    unless uuid_version in [4, 8],
      do: raise(ArgumentError, "uuid_version must be 8 or 4, got: #{inspect(uuid_version)}")

    unless is_boolean(in_band),
      do: raise(ArgumentError, "key_version_in_band must be a boolean, got: #{inspect(in_band)}")

    {keys, current} = keyring(key, version, Keyword.has_key?(opts, :key_version))

    %__MODULE__{
      ref: Nonceforge.nif_extid_new(keys, type, current, mode, rounds, uuid_version, in_band),
      type: type
    }
  end

  def new(_key, _type, _opts),
    do:
      raise(
        ArgumentError,
        "new/3 takes a key (binary) or keyring (map), a type (string) and options (keyword list)"
      )

  defp keyring(key, version, _given) when is_binary(key) do
    check_key(key, "key")
    {[{version, key}], version}
  end

  defp keyring(%{current: current, keys: keys} = ring, _version, given) when is_map(keys) do
    if given, do: raise(ArgumentError, "key_version is the keyring's :current: leave it out")

    case Map.keys(ring) -- [:current, :keys] do
      [] -> :ok
      extra -> raise ArgumentError, "a keyring has :current and :keys, got also #{inspect(extra)}"
    end

    pairs =
      for {v, k} <- keys do
        unless is_integer(v) and v in 0..15,
          do: raise(ArgumentError, "keyring versions are 0..15, got: #{inspect(v)}")

        check_key(k, "keyring key #{v}")
        {v, k}
      end

    unless Map.has_key?(keys, current),
      do:
        raise(
          ArgumentError,
          "keyring :current (#{inspect(current)}) must be one of its versions #{inspect(Map.keys(keys))}"
        )

    {pairs, current}
  end

  defp keyring(other, _version, _given),
    do:
      raise(
        ArgumentError,
        "key must be a binary of at least 32 bytes or a keyring %{current: v, keys: %{v => key}}, got: #{inspect(other)}"
      )

  defp check_key(k, _what) when is_binary(k) and byte_size(k) >= 32, do: :ok

  defp check_key(k, what) when is_binary(k),
    do: raise(ArgumentError, "#{what} must be at least 32 bytes, got #{byte_size(k)}")

  defp check_key(k, what),
    do: raise(ArgumentError, "#{what} must be a binary, got: #{inspect(k)}")

  @max 18_446_744_073_709_551_616

  @doc """
  The 16-byte external id of `seq` (< 2^56), its random half derived from it
  under the key: the call every face makes without a random half.
  """
  @spec encode(t(), non_neg_integer()) :: <<_::128>>
  def encode(%__MODULE__{ref: ref}, seq) when is_integer(seq) and seq >= 0 and seq < @max,
    do: Nonceforge.nif_extid_encode(ref, seq, nil)

  def encode(_codec, seq),
    do: raise(ArgumentError, "seq must be a non-negative integer, got: #{inspect(seq)}")

  @doc """
  The 16-byte external id of (`seq`, `rand`): seq < 2^56, rand < 2^62, `rand`
  fresh and random for each row and stored beside it.
  """
  @spec encode(t(), non_neg_integer(), non_neg_integer()) :: <<_::128>>
  def encode(%__MODULE__{ref: ref}, seq, rand)
      when is_integer(seq) and seq >= 0 and is_integer(rand) and rand >= 0 and
             seq < @max and rand < @max,
      do: Nonceforge.nif_extid_encode(ref, seq, rand)

  def encode(_codec, seq, rand),
    do:
      raise(
        ArgumentError,
        "seq and rand must be non-negative integers, got: #{inspect(seq)}, #{inspect(rand)}"
      )

  @doc "The random half `encode/2` derives for `seq`."
  @spec derived_rand(t(), non_neg_integer()) :: non_neg_integer()
  def derived_rand(%__MODULE__{ref: ref}, seq) when is_integer(seq) and seq >= 0 and seq < @max,
    do: Nonceforge.nif_extid_derived_rand(ref, seq)

  def derived_rand(_codec, seq),
    do: raise(ArgumentError, "seq must be a non-negative integer, got: #{inspect(seq)}")

  @doc """
  The `{seq, rand}` of an id made by `encode/2`; any other id — made up, of
  another type or key, or made with a stored `rand` — raises `ArgumentError`
  (a made-up id passes 1 time in 2^62). The lookup for ids made without a
  random half; ids made with a stored `rand` are read with
  `decode_unverified/2`.

  Without `:key_version`, the id's key version, or for ids that carry none
  (`:aes128`, `:cycle_walk`, `key_version_in_band: false`) each version held,
  so ids made before a rotation resolve while their key is held; with it,
  that version only.
  """
  @spec decode(t(), <<_::128>>, keyword()) :: {non_neg_integer(), non_neg_integer()}
  def decode(codec, id, opts \\ [])

  def decode(%__MODULE__{ref: ref}, id, opts)
      when is_binary(id) and byte_size(id) == 16 and is_list(opts) do
    case Nonceforge.nif_extid_find(ref, id, key_version(opts)) do
      {seq, rand, _version} ->
        {seq, rand}

      nil ->
        raise ArgumentError,
              "id was not made by this codec: its random half is not the one encode/2 derives"
    end
  end

  def decode(_codec, id, _opts),
    do: raise(ArgumentError, "id must be a 16-byte binary, got: #{inspect(id)}")

  @doc "The sequence number of `decode/3`, with its refusals."
  @spec decode_seq(t(), <<_::128>>, keyword()) :: non_neg_integer()
  def decode_seq(codec, id, opts \\ []) do
    {seq, _rand} = decode(codec, id, opts)
    seq
  end

  @doc """
  The `{seq, rand}` of any well-formed id, **unverified**: a made-up id, or one
  of another type or key, decodes to an unrelated pair. For ids made with a
  stored `rand` (`encode/3`): look the row up by `seq` and compare its stored
  `rand` before trusting the id.
  """
  @spec decode_unverified(t(), <<_::128>>, keyword()) :: {non_neg_integer(), non_neg_integer()}
  def decode_unverified(codec, id, opts \\ []) do
    %{seq: seq, rand: rand} = info(codec, id, opts)
    {seq, rand}
  end

  defp key_version(opts) do
    version = Keyword.get(opts, :key_version)

    unless is_nil(version) or version in 0..15,
      do: raise(ArgumentError, "key_version must be in 0..15, got: #{inspect(version)}")

    version
  end

  @doc """
  Everything an id decodes to, unverified: `%{seq:, rand:, key_version:, derived:}`;
  `:derived` is true when the random half is the one `encode/2` derives (an id
  this codec made; a made-up id passes with probability 2^-62). Option
  `:key_version`: the version of ids that do not carry theirs (`:aes128`,
  `:cycle_walk`, `key_version_in_band: false`).
  """
  @spec info(t(), <<_::128>>, keyword()) :: %{
          seq: non_neg_integer(),
          rand: non_neg_integer(),
          key_version: 0..15,
          derived: boolean()
        }
  def info(codec, id, opts \\ [])

  def info(%__MODULE__{ref: ref}, id, opts)
      when is_binary(id) and byte_size(id) == 16 and is_list(opts) do
    {seq, rand, v, derived} = Nonceforge.nif_extid_decode(ref, id, key_version(opts))
    %{seq: seq, rand: rand, key_version: v, derived: derived}
  end

  def info(_codec, id, _opts),
    do: raise(ArgumentError, "id must be a 16-byte binary, got: #{inspect(id)}")

  @doc """
  The text form of an id: `:uuid`, `:base64url` or `:base32` (TypeID-like, with
  `prefix: true` the type and `_` before it, `check: true` a check character).
  """
  @spec format(t(), <<_::128>>, :uuid | :base64url | :base32, keyword()) :: String.t()
  def format(%__MODULE__{ref: ref}, id, form \\ :uuid, opts \\ [])
      when is_binary(id) and byte_size(id) == 16 do
    Nonceforge.nif_extid_format(
      ref,
      id,
      form,
      Keyword.get(opts, :prefix, false),
      Keyword.get(opts, :check, false)
    )
  end

  @doc "Parses any text form `format/4` makes; errors name the position and the rule."
  @spec parse(t(), String.t()) :: <<_::128>>
  def parse(%__MODULE__{ref: ref}, text) when is_binary(text),
    do: Nonceforge.nif_extid_parse(ref, text)

  def parse(_codec, text),
    do: raise(ArgumentError, "text must be a string, got: #{inspect(text)}")
end
