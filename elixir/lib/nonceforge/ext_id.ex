defmodule Nonceforge.ExtId do
  @moduledoc """
  Opaque external ids from internal sequential ids, and back: the core's
  codec (feistel-uuid by default — a UUID-shaped id whose key version travels
  in band), the same bytes as the Rust crate, the CLI, PostgreSQL, Node and Go
  give for the same key and type.

      iex> codec = Nonceforge.ExtId.new(:binary.copy(<<1>>, 32), "user")
      iex> id = Nonceforge.ExtId.encode(codec, 42, 7)
      iex> Nonceforge.ExtId.decode(codec, id)
      {42, 7}
      iex> text = Nonceforge.ExtId.format(codec, id, :base32, prefix: true, check: true)
      iex> Nonceforge.ExtId.parse(codec, text) == id
      true

  A codec is a reference to a NIF resource, freed when nothing holds it.
  """

  @enforce_keys [:ref, :type]
  defstruct [:ref, :type]
  @type t :: %__MODULE__{ref: reference(), type: String.t()}

  @doc """
  A codec for ids of `type` (lower-case letters and underscores, as TypeID's
  prefixes) under the master `key` (at least 32 bytes).

  Options: `:key_version` (0..15, default 0), `:mode` (`:feistel_uuid`,
  `:aes128`, `:cycle_walk`), `:rounds` (2 or 4, feistel-uuid), `:uuid_version`
  (8 or 4, feistel-uuid).
  """
  @spec new(binary(), String.t(), keyword()) :: t()
  def new(key, type, opts \\ [])

  def new(key, type, opts) when is_binary(key) and is_binary(type) and is_list(opts) do
    if byte_size(key) < 32,
      do: raise(ArgumentError, "key must be at least 32 bytes, got #{byte_size(key)}")

    version = Keyword.get(opts, :key_version, 0)
    mode = Keyword.get(opts, :mode, :feistel_uuid)
    rounds = Keyword.get(opts, :rounds, 2)
    uuid_version = Keyword.get(opts, :uuid_version, 8)

    unless version in 0..15,
      do: raise(ArgumentError, "key_version must be in 0..15, got: #{inspect(version)}")

    unless rounds in [2, 4],
      do: raise(ArgumentError, "rounds must be 2 or 4, got: #{inspect(rounds)}")

    unless uuid_version in [4, 8],
      do: raise(ArgumentError, "uuid_version must be 8 or 4, got: #{inspect(uuid_version)}")

    %__MODULE__{
      ref: Nonceforge.nif_extid_new(key, type, version, mode, rounds, uuid_version),
      type: type
    }
  end

  def new(_key, _type, _opts),
    do:
      raise(
        ArgumentError,
        "new/3 takes a key (binary), a type (string) and options (keyword list)"
      )

  @doc "The 16-byte external id of (`seq`, `rand`): seq < 2^56, rand < 2^62."
  @spec encode(t(), non_neg_integer(), non_neg_integer()) :: <<_::128>>
  def encode(%__MODULE__{ref: ref}, seq, rand)
      when is_integer(seq) and seq >= 0 and is_integer(rand) and rand >= 0 and
             seq < 18_446_744_073_709_551_616 and rand < 18_446_744_073_709_551_616,
      do: Nonceforge.nif_extid_encode(ref, seq, rand)

  def encode(_codec, seq, rand),
    do:
      raise(
        ArgumentError,
        "seq and rand must be non-negative integers, got: #{inspect(seq)}, #{inspect(rand)}"
      )

  @doc "The `{seq, rand}` of an external id of this codec's type and key."
  @spec decode(t(), <<_::128>>) :: {non_neg_integer(), non_neg_integer()}
  def decode(%__MODULE__{ref: ref}, id) when is_binary(id) and byte_size(id) == 16 do
    {seq, rand, _version} = Nonceforge.nif_extid_decode(ref, id)
    {seq, rand}
  end

  def decode(_codec, id),
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
