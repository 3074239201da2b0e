defmodule Nonceforge.PackageTest do
  # The package as a user gets it: `mix nonceforge.package` copies exactly the
  # files of `package: [files: …]` (what `mix hex.build` packs) to a temporary
  # directory, and a new Mix app that depends on it by path compiles and runs —
  # with the prebuilt NIF and no cargo on the PATH; refusing a prebuilt NIF that
  # does not match its checksum; from the vendored Rust sources with cargo; and
  # with neither, a clear message.
  use ExUnit.Case, async: false

  @moduletag timeout: 900_000
  @here Path.expand("..", __DIR__)

  defp mix(args, cd, env \\ []) do
    System.cmd("mix", args, cd: cd, env: env, stderr_to_stdout: true)
  end

  # A PATH with elixir and erl but no cargo.
  defp path_without_cargo do
    dirs =
      System.get_env("PATH")
      |> String.split(":")
      |> Enum.reject(&File.exists?(Path.join(&1, "cargo")))

    refute Enum.any?(dirs, &File.exists?(Path.join(&1, "cargo")))
    Enum.join(dirs, ":")
  end

  defp app(dir, pkg) do
    File.mkdir_p!(dir)

    File.write!(Path.join(dir, "mix.exs"), """
    defmodule Consumer.MixProject do
      use Mix.Project
      def project, do: [app: :consumer, version: "0.1.0", deps: [{:nonceforge, path: #{inspect(pkg)}}]]
      def application, do: [extra_applications: [:logger]]
    end
    """)

    dir
  end

  @script ~s|Nonceforge.init(machine_id: 3); IO.puts("nonce=" <> Base.encode16(Nonceforge.nonce(128)))|

  # Packed once; each test works on its own copy.
  setup_all do
    packed =
      Path.join(System.tmp_dir!(), "nonceforge-packed-#{System.unique_integer([:positive])}")

    {out, 0} = mix(["nonceforge.package", packed, "--prebuilt"], @here)
    assert out =~ "package in"
    on_exit(fn -> File.rm_rf!(packed) end)
    %{packed: packed}
  end

  setup %{packed: packed} do
    tmp = Path.join(System.tmp_dir!(), "nonceforge-package-#{System.unique_integer([:positive])}")
    File.mkdir_p!(tmp)
    on_exit(fn -> File.rm_rf!(tmp) end)
    File.cp_r!(packed, Path.join(tmp, "pkg"))
    %{tmp: tmp, pkg: Path.join(tmp, "pkg")}
  end

  test "the package holds what hex.build would pack, and nothing of the repository", %{pkg: pkg} do
    assert File.exists?(Path.join(pkg, "native/Cargo.lock"))
    assert File.exists?(Path.join(pkg, "native/crates/nonceforge-elixir/src/lib.rs"))
    assert File.exists?(Path.join(pkg, "priv/native/checksums.txt"))
    refute File.exists?(Path.join(pkg, "test"))
    refute File.exists?(Path.join(pkg, "_build"))
    members = File.read!(Path.join(pkg, "native/Cargo.toml"))

    assert members =~
             ~s(members = ["crates/nonceforge", "crates/nonceforge-lease", "crates/nonceforge-elixir"])
  end

  test "a new app compiles and runs on the prebuilt NIF with no cargo on the PATH", %{
    tmp: tmp,
    pkg: pkg
  } do
    dir = app(Path.join(tmp, "app"), pkg)
    {out, code} = mix(["run", "-e", @script], dir, [{"PATH", path_without_cargo()}])
    assert code == 0, out
    assert out =~ ~r/nonce=[0-9A-F]{32}/
  end

  test "a prebuilt NIF that does not match its checksum is refused", %{tmp: tmp, pkg: pkg} do
    [so] = Path.wildcard(Path.join(pkg, "priv/native/*.so"))
    File.write!(so, "not the library", [:append])
    dir = app(Path.join(tmp, "tampered"), pkg)
    {out, code} = mix(["compile"], dir, [{"PATH", path_without_cargo()}])
    assert code != 0
    assert out =~ "does not match its checksum"
  end

  test "without a prebuilt NIF: built from the vendored sources with cargo; without cargo, a clear message",
       %{tmp: tmp, pkg: pkg} do
    File.rm_rf!(Path.join(pkg, "priv"))
    dir = app(Path.join(tmp, "nocargo"), pkg)
    {out, code} = mix(["compile"], dir, [{"PATH", path_without_cargo()}])
    assert code != 0
    assert out =~ "cargo"
    assert out =~ "Install Rust"

    # With cargo: the vendored workspace builds with --locked. The repository's
    # target directory is shared so that the registry crates are not compiled
    # again (the three crates of the package are: their paths differ).
    dir = app(Path.join(tmp, "fromsource"), pkg)
    target = Path.expand("../target", @here)
    {out, code} = mix(["run", "-e", @script], dir, [{"CARGO_TARGET_DIR", target}])
    assert code == 0, out
    assert out =~ "building the NIF with cargo in #{Path.join(pkg, "native")}"
    assert out =~ ~r/nonce=[0-9A-F]{32}/
  end
end
