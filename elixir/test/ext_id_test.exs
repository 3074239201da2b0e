defmodule Nonceforge.ExtIdTest do
  # Nonceforge.ExtId against the shared vectors (testdata/vectors/extid.json)
  # and its keyrings, rotation and bad input; the other faces read the same file.
  use ExUnit.Case, async: true
  import Bitwise

  doctest Nonceforge.ExtId

  @key :binary.copy(<<42>>, 32)

  describe "cross-face: the external-id vectors" do
    # testdata/vectors/extid.json: every mode, rounds, UUID version, the
    # out-of-band key version, a rotated keyring and the call without rand.
    # No JSON module here: each flat object's fields are read by pattern.
    test "every vector encodes, decodes and derives as the vectors say" do
      text = File.read!(Path.expand("../../testdata/vectors/extid.json", __DIR__))
      [_, master] = Regex.run(~r/"master_hex": "([0-9a-f]+)"/, text)
      [_, rotated] = Regex.run(~r/"rotated_master_hex": "([0-9a-f]+)"/, text)

      keys = %{
        0 => Base.decode16!(master, case: :lower),
        3 => Base.decode16!(rotated, case: :lower)
      }

      vectors =
        for [object] <- Regex.scan(~r/\{[^{}]*"hex"[^{}]*\}/, text) do
          for [_, k, v] <- Regex.scan(~r/"(\w+)": ("[^"]*"|true|false|\d+)/, object), into: %{} do
            value =
              case v do
                "true" -> true
                "false" -> false
                "\"" <> rest -> String.trim_trailing(rest, "\"")
                digits -> String.to_integer(digits)
              end

            {k, value}
          end
        end

      assert length(vectors) >= 120

      for v <- vectors do
        mode = v["mode"] |> String.replace("-", "_") |> String.to_atom()
        in_band = v["key_version_in_band"]

        codec =
          Nonceforge.ExtId.new(%{current: v["key_version"], keys: keys}, v["type"],
            mode: mode,
            rounds: v["rounds"],
            uuid_version: v["uuid_version"],
            key_version_in_band: in_band
          )

        id = Base.decode16!(v["hex"], case: :lower)
        assert Nonceforge.ExtId.encode(codec, v["seq"], v["rand"]) == id, inspect(v)
        assert Nonceforge.ExtId.derived_rand(codec, v["seq"]) == v["derived_rand"]
        if v["default_call"], do: assert(Nonceforge.ExtId.encode(codec, v["seq"]) == id)
        opts = if mode == :feistel_uuid and in_band, do: [], else: [key_version: v["key_version"]]

        assert Nonceforge.ExtId.info(codec, id, opts) == %{
                 seq: v["seq"],
                 rand: v["rand"],
                 key_version: v["key_version"],
                 derived: v["derived"]
               }
      end
    end

    test "the call without rand leaks nothing; keyrings and their errors" do
      codec = Nonceforge.ExtId.new(@key, "user")
      ids = for s <- 1..1000, do: Nonceforge.ExtId.encode(codec, s)
      assert ids |> Enum.map(&binary_part(&1, 0, 4)) |> Enum.uniq() |> length() == 1000
      constant = for s <- 1..1000, do: Nonceforge.ExtId.encode(codec, s, 0)
      assert constant |> Enum.map(&binary_part(&1, 0, 4)) |> Enum.uniq() |> length() <= 16
      refute Nonceforge.ExtId.info(codec, Nonceforge.ExtId.encode(codec, 5, 9)).derived
      assert Nonceforge.ExtId.decode_seq(codec, Nonceforge.ExtId.encode(codec, 5)) == 5

      assert_raise ArgumentError, ~r/not made by this codec/, fn ->
        Nonceforge.ExtId.decode_seq(codec, Nonceforge.ExtId.encode(codec, 5, 9))
      end

      # The obvious decode is the checked one; the unverified one says so.
      stored = Nonceforge.ExtId.encode(codec, 5, 9)
      derived5 = Nonceforge.ExtId.derived_rand(codec, 5)
      assert Nonceforge.ExtId.decode(codec, Nonceforge.ExtId.encode(codec, 5)) == {5, derived5}

      assert_raise ArgumentError, ~r/not made by this codec/, fn ->
        Nonceforge.ExtId.decode(codec, stored)
      end

      assert Nonceforge.ExtId.decode_unverified(codec, stored) == {5, 9}

      # decode_seq across a rotation, in every layout: ids made under key 0
      # resolve with the rotated keyring (those that carry no version by
      # trying each held one), and not once key 0 is dropped.
      next_key = :binary.copy(<<7>>, 32)

      for opts <- [
            [],
            [rounds: 4],
            [key_version_in_band: false],
            [mode: :aes128],
            [mode: :cycle_walk]
          ],
          seq <- [0, 42, Bitwise.bsl(1, 40)] do
        before = Nonceforge.ExtId.new(@key, "user", opts)

        rotated =
          Nonceforge.ExtId.new(%{current: 2, keys: %{0 => @key, 2 => next_key}}, "user", opts)

        newest = Nonceforge.ExtId.new(%{current: 2, keys: %{2 => next_key}}, "user", opts)
        was = Nonceforge.ExtId.encode(before, seq)
        now = Nonceforge.ExtId.encode(rotated, seq)
        assert was != now
        assert Nonceforge.ExtId.decode_seq(rotated, was) == seq, inspect(opts)
        assert Nonceforge.ExtId.decode_seq(rotated, now) == seq, inspect(opts)
        assert_raise ArgumentError, fn -> Nonceforge.ExtId.decode_seq(newest, was) end

        assert_raise ArgumentError, fn ->
          Nonceforge.ExtId.decode_seq(rotated, Nonceforge.ExtId.encode(rotated, seq, 7))
        end
      end

      assert_raise ArgumentError, ~r/16-byte binary/, fn ->
        Nonceforge.ExtId.decode_seq(codec, "not 16 bytes")
      end

      # One rule for an explicit key version: an id that carries its own
      # refuses another (without saying which it carries).
      ringed = Nonceforge.ExtId.new(%{current: 2, keys: %{0 => @key, 2 => next_key}}, "user")
      fresh = Nonceforge.ExtId.encode(ringed, 41)
      assert Nonceforge.ExtId.info(ringed, fresh, key_version: 2).seq == 41

      assert_raise ArgumentError, ~r/carries its key version, and not the 0 given/, fn ->
        Nonceforge.ExtId.info(ringed, fresh, key_version: 0)
      end

      # The refusal names neither the sequence number the id decodes to (the
      # true one, for an id made with a stored random half) nor its random half.
      {seq, rand} = {271_828_182, 314_159_265_358}
      hidden = Nonceforge.ExtId.encode(codec, seq, rand)
      e = assert_raise ArgumentError, fn -> Nonceforge.ExtId.decode_seq(codec, hidden) end

      for n <- [seq, rand],
          shown <- [Integer.to_string(n), Integer.to_string(n, 16)] do
        refute String.contains?(String.upcase(e.message), String.upcase(shown)), e.message
      end

      assert_raise ArgumentError, ~r/must be one of its versions/, fn ->
        Nonceforge.ExtId.new(%{current: 1, keys: %{0 => @key}}, "user")
      end

      assert_raise ArgumentError, ~r/versions are 0..15/, fn ->
        Nonceforge.ExtId.new(%{current: 0, keys: %{0 => @key, 16 => @key}}, "user")
      end

      assert_raise ArgumentError, ~r/keyring key 0 must be at least 32 bytes/, fn ->
        Nonceforge.ExtId.new(%{current: 0, keys: %{0 => "short"}}, "user")
      end

      assert_raise ArgumentError, ~r/leave it out/, fn ->
        Nonceforge.ExtId.new(%{current: 0, keys: %{0 => @key}}, "user", key_version: 0)
      end

      assert_raise ArgumentError, ~r/key_version_in_band must be a boolean/, fn ->
        Nonceforge.ExtId.new(@key, "user", key_version_in_band: :no)
      end

      # Out of band: 60-bit sequence numbers, the version given on decode.
      post =
        Nonceforge.ExtId.new(
          %{current: 2, keys: %{0 => @key, 2 => :binary.copy(<<9>>, 32)}},
          "user",
          key_version_in_band: false
        )

      big = (1 <<< 60) - 1
      id = Nonceforge.ExtId.encode(post, big)
      assert %{seq: ^big, derived: true} = Nonceforge.ExtId.info(post, id, key_version: 2)
      refute Nonceforge.ExtId.info(post, id, key_version: 0).derived
      assert {^big, _} = Nonceforge.ExtId.decode(post, id, key_version: 2)

      assert_raise ArgumentError, ~r/not made by this codec/, fn ->
        Nonceforge.ExtId.decode(post, id, key_version: 0)
      end

      assert_raise ArgumentError, ~r/key_version must be in 0..15/, fn ->
        Nonceforge.ExtId.decode(post, id, key_version: 16)
      end
    end
  end
end
