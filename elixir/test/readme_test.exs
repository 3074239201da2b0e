defmodule Nonceforge.ReadmeTest do
  # The README's Elixir blocks, as written, in order: the supervision tree
  # (its Redis URL replaced by a throwaway Redis on a loopback port, BASE_KEY
  # set), started; then the calls, on the instance it initialized. A block
  # after `<!-- not run: why -->` is skipped (the README says why).
  use ExUnit.Case, async: false

  @moduletag timeout: 120_000
  @readme Path.expand("../README.md", __DIR__)

  defp blocks do
    lines = @readme |> File.read!() |> String.split("\n")

    {blocks, _, _} =
      Enum.reduce(Enum.with_index(lines), {[], nil, nil}, fn {line, i}, {acc, cur, prev} ->
        case {String.trim(line), cur} do
          {"```elixir", nil} ->
            skip = prev && Regex.match?(~r/^<!-- not run: .+ -->$/, String.trim(prev))
            {acc, %{at: i + 1, lines: [], skip: skip}, line}

          {"```", %{} = b} ->
            {[%{b | lines: Enum.reverse(b.lines)} | acc], nil, line}

          {_, %{} = b} ->
            {acc, %{b | lines: [line | b.lines]}, line}

          _ ->
            {acc, nil, line}
        end
      end)

    Enum.reverse(blocks)
  end

  test "every Elixir block of the README runs as written" do
    all = blocks()
    runnable = Enum.reject(all, & &1.skip)
    assert length(runnable) >= 2
    store = Nonceforge.Test.Stores.redis()
    System.put_env("BASE_KEY", Base.encode16(:crypto.strong_rand_bytes(32)))

    try do
      binding =
        Enum.reduce(runnable, [], fn b, binding ->
          code =
            b.lines
            |> Enum.join("\n")
            |> String.replace("redis://10.0.0.5:6379", "redis://127.0.0.1:#{store.port}")

          {_value, binding} = Code.eval_string(code, binding, file: @readme, line: b.at + 1)

          # The tree the README's children describe, started as an application does.
          if children = binding[:children] do
            {:ok, sup} = Supervisor.start_link(children, strategy: :one_for_one)
            Process.put(:readme_sup, sup)
            Keyword.delete(binding, :children)
          else
            binding
          end
        end)

      assert is_list(binding)
      assert %{machine_id: id} = Nonceforge.decompose(Nonceforge.sortable_nonce(96))
      assert id in 0..511
    after
      if sup = Process.get(:readme_sup), do: Supervisor.stop(sup)
      System.delete_env("BASE_KEY")
      Nonceforge.Test.Stores.stop(store)
    end
  end
end
