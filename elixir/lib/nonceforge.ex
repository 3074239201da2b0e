defmodule Nonceforge do
  @moduledoc """
  Nonces — values that never repeat — for the BEAM, on the nonceforge core: a
  drop-in for NoNoncense with the same names and semantics, faster, and in the
  same id space as every other face of nonceforge (Rust, the CLI, PostgreSQL,
  Node, Go): the same 64/96/128-bit layout, the same machine-id leases.

      iex> Nonceforge.init(machine_id: 7, base_key: :binary.copy(<<7>>, 32))
      :ok
      iex> <<_::128>> = Nonceforge.nonce(128)
      iex> <<_::64>> = Nonceforge.sortable_nonce(64)
      iex> n = Nonceforge.encrypted_nonce(96)
      iex> byte_size(n)
      12
      iex> Nonceforge.nonce(64) |> Nonceforge.encrypt() |> Nonceforge.decrypt() |> byte_size()
      8

  Porting from NoNoncense is a rename: `NoNoncense.nonce(64)` becomes
  `Nonceforge.nonce(64)`; `init/1` takes the same options.

  ## Anatomy of a nonce

  42 bits of milliseconds since the epoch (default 2025-01-01T00:00:00Z), 9
  bits of machine id, then the counter (64: 13 bits; 96: 45 bits; 128: 13 zero
  bits and 64). Counter nonces start at the instance's start time and may run
  ahead of the clock (64-bit ones wait, never more than about a millisecond,
  when they catch up with it); sortable nonces carry the millisecond they were
  made in; encrypted nonces are counter (or sortable) nonces put through a
  block cipher of the nonce's width, so they stay unique.

  ## Encryption: two modes

  | `:mode` | keys | ciphers (64 / 96 / 128 bits) |
  |---|---|---|
  | `:nononcense` (the default) | NoNoncense 2.0's: PBKDF2-HMAC-SHA256 of `:base_key`, 1000 iterations, salts `"blowfish_64"`, `"des3_96"`, `"aes"`, … or `:key64`/`:key96`/`:key128` as given | `:cipher64`/`:cipher96` = `:blowfish` (default), `:des3`, `:speck`; `:cipher128` = `:aes` (default), `:speck`; a 96-bit nonce under Blowfish or 3DES is a 64-bit nonce encrypted, then 32 zero bits |
  | `:nonceforge` | HKDF-SHA256 of `:base_key` with the core's labels | Speck64/128, Speck96/144, AES-256: the same encrypted nonces as every other nonceforge face with that base key |

  In `:nononcense` mode `encrypt/2` and `decrypt/2` give exactly what
  NoNoncense 2.0 gives for the same key and nonce (tested against OTP's
  `:crypto`), so a service can switch without its encrypted nonces changing
  meaning. Use `:nonceforge` for a new fleet that mixes languages.

  ## Machine ids

  `:machine_id` is required: an integer 0..511, or one of
  `Nonceforge.MachineId`'s strategies (`{:env, "VAR"}`, `{:node_list, [...]}`),
  or `{:lease, url, opts}` — a lease from PostgreSQL, Redis or etcd through the
  Rust lease crate, the same store and protocol as the CLI's `--lease`. Under a
  lease the instance issues only until its local deadline: past it every call
  raises `Nonceforge.Errors.DisabledError`, and the process that called `init/1`
  gets `{:nonceforge, :lease_lost, :lapsed | :lost}`.

  ## Errors

  Bad arguments raise `ArgumentError` naming the argument and the rule; an
  instance that was never initialized raises
  `Nonceforge.Errors.UninitializedError`; a disabled one (lease lapsed, or
  `Nonceforge.ConflictGuard`) `Nonceforge.Errors.DisabledError`. The NIF never
  takes the VM down: a panic inside it is an exception too.
  """

  require Logger
  alias Nonceforge.LeaseOptions

  @on_load :load_nif
  @doc false
  def load_nif do
    path = :filename.join(:code.priv_dir(:nonceforge), ~c"nonceforge_nif")
    :erlang.load_nif(path, 0)
  end

  @type name :: atom()
  @type nonce_size :: 64 | 96 | 128
  @type nonce :: <<_::64>> | <<_::96>> | <<_::128>>

  @init_opts ~w(name machine_id epoch base_key key64 key96 key128 cipher64 cipher96 cipher128 mode layout)a

  @doc """
  Initializes an instance. Several instances, under different names, may run
  side by side (one per purpose: ids and IVs, say).

  | option | default | rule |
  |---|---|---|
  | `:machine_id` | required | 0..511, `{:env, var}`, `{:node_list, list}` (see `Nonceforge.MachineId`) or `{:lease, url, opts}` (see below) |
  | `:name` | `Nonceforge` | an atom |
  | `:epoch` | 2025-01-01 (1735689600000) | Unix milliseconds, not in the future; the same on every member |
  | `:base_key` | none (no encrypted nonces) | a binary of at least 256 bits |
  | `:key64`, `:key96`, `:key128` | derived from `:base_key` | the cipher's key length (`:nononcense` mode only) |
  | `:cipher64`, `:cipher96` | `:blowfish` | `:blowfish`, `:des3`, `:speck` (`:nononcense` mode) |
  | `:cipher128` | `:aes` | `:aes`, `:speck` (`:nononcense` mode) |
  | `:mode` | `:nononcense` | `:nononcense` or `:nonceforge` (see the module docs) |
  | `:layout` | `:standard` | `:standard` (NoNoncense's 9-bit machine id) or `:wide` (16 bits, 0..65535, 96- and 128-bit nonces only; needs `mode: :nonceforge`, an integer or `{:env, var}` machine id, no lease yet: docs/contracts.md, "The wide layout") |

  Lease options (`{:lease, url, opts}`, url `postgres://…`, `redis://…` or
  `etcd://…`): `:ttl` (ms, default 10000), `:renew_every`, `:margin`,
  `:connect_timeout` (ms, default 5000), `:ids` (a range within 0..511, default
  0..511), `:namespace` (default `"nonceforge"`), `:holder`, `:pg_schema` (default `"nonceforge_lease"`), `:fast_start` (`:off`, the default: every
  grant starts the TTL and margin ahead, safe when the store fails over to a replica that was behind or
  is restored from a backup; `:verify` or `:declared` where it cannot go back: docs/lease-protocol.md). The lease is held by
  the core inside the NIF; `release/1` gives it back.

      iex> Nonceforge.init(name: :ids, machine_id: 3, epoch: 1_609_459_200_000)
      :ok
      iex> Nonceforge.init(name: :wide, machine_id: 40_000, mode: :nonceforge, layout: :wide)
      :ok
      iex> Nonceforge.decompose(:wide, Nonceforge.nonce(:wide, 96)).machine_id
      40000
  """
  @spec init(keyword()) :: :ok
  def init(opts \\ [])

  def init(opts) when is_list(opts) do
    {name, epoch, crypt} = checked(opts)
    layout = crypt.layout

    case Keyword.fetch!(opts, :machine_id) do
      {:lease, url, lease_opts} ->
        # The namespace records the layout and refuses a member of the other one.
        {:ok, _id} =
          nif_init_leased(
            name,
            LeaseOptions.check_url(url),
            LeaseOptions.from_keyword(lease_opts, layout),
            epoch,
            crypt
          )

        :ok

      spec when layout == :wide ->
        nif_init(name, Nonceforge.MachineId.wide_id!(spec), epoch, crypt)

      spec ->
        nif_init(name, Nonceforge.MachineId.id!(spec), epoch, crypt)
    end
  end

  def init(opts),
    do:
      raise(
        ArgumentError,
        "init/1 takes a keyword list of options, got: #{Kernel.inspect(opts)}"
      )

  @max_ts Bitwise.bsl(1, 42) - 1
  @day_ms 24 * 60 * 60 * 1000

  # NoNoncense's time rules: 42 bits of milliseconds since the epoch. An epoch
  # whose 42 bits have run out by `now` is refused; one within a year of it,
  # warned about. (From the default epoch, the first happens in 2164.)
  @doc false
  def check_timestamp_room!(epoch, now) do
    elapsed = now - epoch

    cond do
      elapsed > @max_ts ->
        raise RuntimeError, "timestamp overflow"

      div(@max_ts - elapsed, @day_ms) <= 365 ->
        Logger.warning("timestamp overflow in #{div(@max_ts - elapsed, @day_ms)} days")

      true ->
        :ok
    end
  end

  # init/1's checks, in NoNoncense's order and words where NoNoncense checks
  # the same thing (its users' tests match the messages): {name, epoch, crypt}.
  defp checked(opts) do
    unless Keyword.keyword?(opts),
      do: raise(ArgumentError, "init/1 takes a keyword list of options")

    case Keyword.keys(opts) -- @init_opts do
      [] ->
        :ok

      # Ignored, as NoNoncense ignores them (a shared config may carry options of
      # either library during a switch), but said.
      unknown ->
        Logger.warning(
          "Nonceforge.init/1: unknown option(s) #{Kernel.inspect(unknown)} ignored; known: #{Kernel.inspect(@init_opts)}"
        )
    end

    # `nil` is the default, as in NoNoncense (1.x configs write `name: nil`).
    name = Keyword.get(opts, :name) || __MODULE__

    unless is_atom(name),
      do: raise(ArgumentError, "name must be an atom, got: #{Kernel.inspect(name)}")

    epoch = Keyword.get(opts, :epoch) || nif_default_epoch()

    # Unix milliseconds, 1970 or before it too (as NoNoncense), not in the future.
    unless is_integer(epoch) and epoch <= System.os_time(:millisecond) do
      raise ArgumentError,
            "epoch must be Unix milliseconds (an integer), not in the future, got: #{Kernel.inspect(epoch)}"
    end

    # As NoNoncense's Keyword.fetch!: a KeyError, with what the option takes.
    unless Keyword.has_key?(opts, :machine_id),
      do:
        raise(%KeyError{
          key: :machine_id,
          term: opts,
          message:
            "key :machine_id not found: machine_id is required (0..511, {:env, var}, {:node_list, list} or {:lease, url, opts}; or start Nonceforge.MachineId)"
        })

    wide? = Keyword.get(opts, :layout) == :wide

    case Keyword.fetch!(opts, :machine_id) do
      id when is_integer(id) and (id < 0 or id > 511) and not wide? ->
        raise ArgumentError, "machine ID out of range 0-511"

      _ ->
        :ok
    end

    check_timestamp_room!(epoch, System.os_time(:millisecond))
    {name, epoch, crypt_opts(opts)}
  end

  @doc false
  # Nonceforge.MachineId with a lease strategy: an instance on a lease that
  # several instances share (no :machine_id of its own).
  def init_on_lease(opts, lease) do
    if Keyword.has_key?(opts, :machine_id),
      do:
        raise(
          ArgumentError,
          "an instance of Nonceforge.MachineId takes its machine_id from the strategy: remove :machine_id from it"
        )

    # Every check of init/1, with a placeholder id that is never used.
    {name, epoch, crypt} = checked(Keyword.put(opts, :machine_id, 0))

    if crypt.layout == :wide,
      do:
        raise(
          ArgumentError,
          "layout: :wide is not taken by Nonceforge.MachineId yet (its strategies hand out 9-bit ids): init the instance with a planned machine_id, or with machine_id: {:lease, url, opts} (a wide lease namespace)"
        )

    nif_init_on_lease(name, lease, epoch, crypt)
  end

  # NoNoncense's ciphers and the key lengths they take, per nonce size, and
  # the name its "<name> key size must be N bits" message gives each.
  @ciphers %{
    64 => %{blowfish: {128, "blowfish"}, des3: {192, "des3"}, speck: {128, "speck64"}},
    96 => %{blowfish: {128, "blowfish"}, des3: {192, "des3"}, speck: {144, "speck96"}},
    128 => %{aes: {256, "aes"}, speck: {256, "speck128"}}
  }

  defp crypt_opts(opts) do
    mode = Keyword.get(opts, :mode, :nononcense)

    unless mode in [:nononcense, :nonceforge],
      do:
        raise(
          ArgumentError,
          "mode must be :nononcense or :nonceforge, got: #{Kernel.inspect(mode)}"
        )

    base_key = Keyword.get(opts, :base_key)

    unless is_nil(base_key) or (is_binary(base_key) and bit_size(base_key) >= 256) do
      raise ArgumentError, "base_key size must be at least 256 bits"
    end

    keys = for k <- [:key64, :key96, :key128], into: %{}, do: {k, Keyword.get(opts, k)}

    ciphers = %{
      cipher64: Keyword.get(opts, :cipher64) || :blowfish,
      cipher96: Keyword.get(opts, :cipher96) || :blowfish,
      cipher128: Keyword.get(opts, :cipher128) || :aes
    }

    if mode == :nonceforge do
      for {k, v} <- keys,
          not is_nil(v),
          do: raise(ArgumentError, "#{k} is a NoNoncense option: use it with mode: :nononcense")

      if Enum.any?([:cipher64, :cipher96, :cipher128], &Keyword.has_key?(opts, &1)),
        do:
          raise(
            ArgumentError,
            "cipher64/cipher96/cipher128 are NoNoncense options: use them with mode: :nononcense"
          )
    end

    # Size by size, as NoNoncense: the cipher, then the length of a key given.
    for size <- [64, 96, 128] do
      alg = ciphers[:"cipher#{size}"]
      key = keys[:"key#{size}"]

      case @ciphers[size][alg] do
        nil ->
          raise ArgumentError, "alg #{alg} is not supported for #{size}-bit nonces"

        {bits, label} ->
          unless is_nil(key) or (is_binary(key) and bit_size(key) == bits),
            do: raise(ArgumentError, "#{label} key size must be #{bits} bits")
      end
    end

    layout = Keyword.get(opts, :layout, :standard)

    unless layout in [:standard, :wide],
      do:
        raise(
          ArgumentError,
          "layout must be :standard (9-bit machine ids, NoNoncense's) or :wide (16-bit machine ids, 96 and 128 bits), got: #{Kernel.inspect(layout)}"
        )

    if layout == :wide and mode != :nonceforge,
      do:
        raise(
          ArgumentError,
          "layout: :wide needs mode: :nonceforge (NoNoncense's layout, the :nononcense mode's, has 9-bit machine ids)"
        )

    Map.merge(%{mode: mode, base_key: base_key, layout: layout}, Map.merge(keys, ciphers))
  end

  @doc """
  A counter nonce of `bits` (64, 96 or 128) from the instance `name`.

      iex> Nonceforge.init(machine_id: 1)
      iex> byte_size(Nonceforge.nonce(96))
      12
  """
  @spec nonce(name(), nonce_size()) :: nonce()
  def nonce(name \\ __MODULE__, bits)
  def nonce(_name, _bits), do: :erlang.nif_error(:nif_not_loaded)

  @doc """
  A sortable nonce of `bits`: it carries the millisecond it was made in, and
  nonces of one instance strictly increase.
  """
  @spec sortable_nonce(name(), nonce_size()) :: nonce()
  def sortable_nonce(name \\ __MODULE__, bits)
  def sortable_nonce(_name, _bits), do: :erlang.nif_error(:nif_not_loaded)

  @doc """
  An encrypted nonce of `bits` over a `base_type` (`:counter`, the default, or
  `:sortable`) nonce: unique and unpredictable. Needs a key (`:base_key`).
  """
  @spec encrypted_nonce(name(), nonce_size(), :counter | :sortable) :: nonce()
  def encrypted_nonce(name \\ __MODULE__, bits, base_type \\ :counter)
  def encrypted_nonce(_name, _bits, _base_type), do: :erlang.nif_error(:nif_not_loaded)

  @doc """
  Encrypts a nonce of this instance, as its encrypted nonces are made. Only for
  nonces: these are raw single-block ciphers, not for your data.
  """
  @spec encrypt(name(), nonce()) :: nonce()
  def encrypt(name \\ __MODULE__, nonce)
  def encrypt(_name, _nonce), do: :erlang.nif_error(:nif_not_loaded)

  @doc "Decrypts what `encrypt/2` (or `encrypted_nonce/3`) made."
  @spec decrypt(name(), nonce()) :: nonce()
  def decrypt(name \\ __MODULE__, nonce)
  def decrypt(_name, _nonce), do: :erlang.nif_error(:nif_not_loaded)

  @doc """
  The time in a nonce's first 42 bits, as a `DateTime`, given the instance's
  epoch — of any 64, 96 or 128-bit binary, as NoNoncense reads it (meaningful
  for plain nonces; an encrypted one gives some time).
  """
  @spec get_datetime(name(), nonce()) :: DateTime.t()
  def get_datetime(name \\ __MODULE__, nonce)

  def get_datetime(name, <<ms::42, _::bits>> = nonce) when bit_size(nonce) in [64, 96, 128] do
    # The epoch: the time of a nonce whose 42 bits are zero.
    # (96 bits: a wide instance has no 64-bit nonces.)
    {epoch, _machine_id, _counter} = nif_decompose(name, <<0::96>>)
    DateTime.from_unix!(epoch + ms, :millisecond)
  end

  def get_datetime(_name, nonce),
    do:
      raise(
        ArgumentError,
        "nonce must be a binary of 8, 12 or 16 bytes, got: #{Kernel.inspect(nonce)}"
      )

  @doc """
  `count` nonces of `kind` (`:counter`, `:sortable`, `:encrypted`) and `bits`
  in one binary, made with one reservation of the counter. Batches above about
  a millisecond of work run on a dirty CPU scheduler.

      iex> Nonceforge.init(machine_id: 2)
      iex> byte_size(Nonceforge.nonces(Nonceforge, :counter, 128, 1000))
      16000
  """
  @spec nonces(name(), :counter | :sortable | :encrypted, nonce_size(), non_neg_integer()) ::
          binary()
  def nonces(name \\ __MODULE__, kind, bits, count)

  def nonces(name, kind, bits, count) when is_integer(count) do
    if count > normal_batch_limit(kind, bits),
      do: nif_nonces_dirty(name, kind, bits, count),
      else: nif_nonces(name, kind, bits, count)
  end

  def nonces(name, kind, bits, count), do: nif_nonces(name, kind, bits, count)

  # The largest batch that stays well under a millisecond on a normal scheduler
  # (bench/RESULTS.md, "The measurements behind the code"; 64-bit nonces are
  # held to 8192 a millisecond, so a large batch may wait for the clock).
  defp normal_batch_limit(:encrypted, _bits), do: 500
  defp normal_batch_limit(_kind, 64), do: 2_000
  defp normal_batch_limit(_kind, _bits), do: 100_000

  @doc """
  The parts of a plain nonce: `%{unix_ms: …, machine_id: …, counter: …}`. For
  an encrypted nonce, `decrypt/2` it first. (Not `inspect/2`: a module that
  does `import Nonceforge` keeps `Kernel.inspect/1,2`.)
  """
  @spec decompose(name(), nonce()) :: %{
          unix_ms: non_neg_integer(),
          machine_id: 0..65_535,
          counter: non_neg_integer()
        }
  def decompose(name \\ __MODULE__, nonce) do
    {unix_ms, machine_id, counter} = inspect_nonce(name, nonce)
    %{unix_ms: unix_ms, machine_id: machine_id, counter: counter}
  end

  defp inspect_nonce(name, nonce) when is_binary(nonce) and byte_size(nonce) in [8, 12, 16],
    do: nif_decompose(name, nonce)

  defp inspect_nonce(_name, nonce),
    do:
      raise(
        ArgumentError,
        "nonce must be a binary of 8, 12 or 16 bytes, got: #{Kernel.inspect(nonce)}"
      )

  @doc "The machine id of an instance."
  @spec machine_id(name()) :: 0..65_535
  def machine_id(name \\ __MODULE__), do: nif_machine_id(name)

  @doc """
  Stops an instance: every call raises `Nonceforge.Errors.DisabledError`
  until `enable/1` (`Nonceforge.ConflictGuard` calls it on a clash).
  """
  @spec disable(name()) :: :ok
  def disable(name \\ __MODULE__), do: nif_set_enabled(name, false)

  @doc "Lets a disabled instance issue again (a lapsed lease still stops it)."
  @spec enable(name()) :: :ok
  def enable(name \\ __MODULE__), do: nif_set_enabled(name, true)

  @doc "Whether the instance issues now."
  @spec enabled?(name()) :: boolean()
  def enabled?(name \\ __MODULE__), do: nif_enabled(name)

  @doc """
  Where the instance's lease stands: `{:held, ms_left}`, `{:lapsed, 0}`,
  `{:lost, 0}`, `{:released, 0}`, or `:none` (a static machine id).
  """
  @spec lease_state(name()) :: {:held | :lapsed | :lost | :released, non_neg_integer()} | :none
  def lease_state(name \\ __MODULE__), do: nif_lease_state(name)

  @doc """
  The instance's figures as the fleet's metric series (the same names, types
  and labels in every face: `testdata/vectors/metrics.json`, what each means
  in `docs/operations.md`): its generator's — nonces issued by kind and size,
  waits for the clock, refusals by reason, the clock and the headroom left —
  and, for an instance that holds its own lease, the lease's. Read when
  called: nothing on the hot path is written for them.
  `Nonceforge.Telemetry.dispatch_metrics/1` emits them as `:telemetry` events
  (call it from a poller).

      iex> Nonceforge.init(machine_id: 3, base_key: :crypto.strong_rand_bytes(32), name: :metrics_doc)
      iex> _ = Nonceforge.sortable_nonce(:metrics_doc, 64)
      iex> Nonceforge.metrics(:metrics_doc)
      ...> |> Enum.find(&(&1.name == "nonceforge_nonces_issued_total" and &1.labels == %{kind: "sortable", bits: "64"}))
      ...> |> Map.take([:type, :value])
      %{type: :counter, value: 1.0}

  Single `nonce/2` and `encrypted_nonce/3` calls take their ticks from a block
  per scheduler thread (256 at 64 bits, 65,536 wider), counted when the block
  is reserved; sortable 96- and 128-bit nonces come from per-thread sequences,
  counted once a millisecond. Sortable 64-bit nonces and `nonces/4` batches
  are counted as they are made.
  """
  @spec metrics(name()) :: [Nonceforge.Telemetry.series()]
  def metrics(name \\ __MODULE__), do: name |> nif_metrics() |> Nonceforge.Telemetry.series()

  @doc """
  What a readiness probe returns: `:ok` while the instance issues (its own
  lease, if any, held and past its start), otherwise `{:error, why}`.
  """
  @spec readiness(name()) :: :ok | {:error, String.t()}
  def readiness(name \\ __MODULE__), do: nif_readiness(name)

  @doc """
  Gives a leased machine id back: the instance stops issuing, its last
  timestamp is recorded as the id's floor, and the id is free for the next
  holder. `:none` for an instance without a lease.
  """
  @spec release(name()) :: :ok | :none | {:error, String.t()}
  def release(name \\ __MODULE__), do: nif_release(name)

  @doc "A UUIDv7 (RFC 9562), 16 bytes: 48-bit Unix ms, a 12-bit fraction, random."
  @spec uuidv7() :: <<_::128>>
  def uuidv7, do: :erlang.nif_error(:nif_not_loaded)

  @doc "A tuid6 (pg_tuid's format), 16 bytes: 48-bit Unix ms, 80 random bits."
  @spec tuid6() :: <<_::128>>
  def tuid6, do: :erlang.nif_error(:nif_not_loaded)

  @doc """
  The compact text form of a 16-byte id (22 characters) or a 32-byte stuid (43):
  base64url without padding.

      iex> Nonceforge.to_compact(Base.decode16!("01838576137BAF9CA637BE6B8D32AF6E"))
      "AYOFdhN7r5ymN75rjTKvbg"
  """
  @spec to_compact(binary()) :: String.t()
  def to_compact(id) when is_binary(id), do: nif_to_compact(id)

  def to_compact(id),
    do: raise(ArgumentError, "id must be a binary, got: #{Kernel.inspect(id)}")

  @doc "Parses the compact form (22 or 43 characters)."
  @spec from_compact(String.t()) :: binary()
  def from_compact(text) when is_binary(text), do: nif_from_compact(text)

  def from_compact(text),
    do: raise(ArgumentError, "text must be a string, got: #{Kernel.inspect(text)}")

  @doc "The Unix milliseconds in a UUIDv7 or tuid6 (its first 48 bits)."
  @spec uuid_unix_ms(<<_::128>>) :: non_neg_integer()
  def uuid_unix_ms(id) when is_binary(id) and byte_size(id) == 16, do: nif_uuid_unix_ms(id)

  def uuid_unix_ms(id),
    do: raise(ArgumentError, "id must be a 16-byte binary, got: #{Kernel.inspect(id)}")

  # NIF stubs (replaced when the library loads).
  @doc false
  def nif_default_epoch(), do: :erlang.nif_error(:nif_not_loaded)
  def nif_init(_name, _machine_id, _epoch, _crypt), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_init_leased(_name, _url, _lease_opts, _epoch, _crypt),
    do: :erlang.nif_error(:nif_not_loaded)

  @doc false
  def nif_lease_acquire(_url, _lease_opts), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_init_on_lease(_name, _lease, _epoch, _crypt), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_lease_release(_lease), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_lease_status(_lease), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_lease_metrics(_lease), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_lease_acquire_exact(_url, _lease_opts, _source, _env_value, _wait_ms),
    do: :erlang.nif_error(:nif_not_loaded)

  @doc false
  def nif_metrics(_name), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_readiness(_name), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_lease_lost_reason(_lease), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_lease_ttl_ms(_lease), do: :erlang.nif_error(:nif_not_loaded)

  @doc false
  def nif_nonces(_name, _kind, _bits, _count), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_nonces_dirty(_name, _kind, _bits, _count), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_decompose(_name, _nonce), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_machine_id(_name), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_set_enabled(_name, _enabled), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_enabled(_name), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_lease_state(_name), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_release(_name), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_to_compact(_id), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_from_compact(_text), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_uuid_unix_ms(_id), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_extid_new(_keys, _type, _current, _mode, _rounds, _uuid_version, _in_band),
    do: :erlang.nif_error(:nif_not_loaded)

  @doc false
  def nif_extid_encode(_codec, _seq, _rand), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_extid_derived_rand(_codec, _seq), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_extid_decode(_codec, _id, _version), do: :erlang.nif_error(:nif_not_loaded)
  def nif_extid_find(_codec, _id, _version), do: :erlang.nif_error(:nif_not_loaded)
  @doc false
  def nif_extid_format(_codec, _id, _form, _prefix, _check),
    do: :erlang.nif_error(:nif_not_loaded)

  @doc false
  def nif_extid_parse(_codec, _text), do: :erlang.nif_error(:nif_not_loaded)
end
