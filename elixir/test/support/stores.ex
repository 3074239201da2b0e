defmodule Nonceforge.Test.Stores do
  @moduledoc false
  # Real lease stores on loopback ports for the tests — PostgreSQL 15, Redis,
  # etcd from Debian (make setup installs them) — stopped and removed by stop/1.

  def free_port do
    {:ok, s} = :gen_tcp.listen(0, ip: {127, 0, 0, 1})
    {:ok, port} = :inet.port(s)
    :gen_tcp.close(s)
    port
  end

  defp tmp(name) do
    dir =
      Path.join(System.tmp_dir!(), "nonceforge-ex-#{name}-#{System.unique_integer([:positive])}")

    File.mkdir_p!(dir)
    dir
  end

  defp need(program) do
    System.find_executable(program) ||
      Enum.find_value(
        ["/usr/lib/postgresql/15/bin"],
        &(File.exists?(Path.join(&1, program)) && Path.join(&1, program))
      ) ||
      raise "#{program} not found: run `make setup`"
  end

  defp wait_port(port, what, tries \\ 200) do
    case :gen_tcp.connect({127, 0, 0, 1}, port, [], 100) do
      {:ok, s} ->
        :gen_tcp.close(s)

      _ when tries > 0 ->
        Process.sleep(25)
        wait_port(port, what, tries - 1)

      _ ->
        raise "#{what} did not open port #{port}"
    end
  end

  def redis do
    port = free_port()
    dir = tmp("redis")

    {_, 0} =
      System.cmd(need("redis-server"), [
        "--port",
        "#{port}",
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "yes",
        "--dir",
        dir,
        "--pidfile",
        Path.join(dir, "pid"),
        "--logfile",
        Path.join(dir, "log")
      ])

    wait_port(port, "redis")
    %{kind: :redis, url: "redis://127.0.0.1:#{port}", port: port, dir: dir}
  end

  def etcd do
    client = free_port()
    peer = free_port()
    dir = tmp("etcd")

    # Through sh, so that etcd's log goes to /dev/null rather than the test output.
    port =
      Port.open({:spawn_executable, "/bin/sh"}, [
        :binary,
        :exit_status,
        args: [
          "-c",
          ~s(exec "$0" "$@" >/dev/null 2>&1),
          need("etcd"),
          "--name",
          "t",
          "--data-dir",
          Path.join(dir, "data"),
          "--listen-client-urls",
          "http://127.0.0.1:#{client}",
          "--advertise-client-urls",
          "http://127.0.0.1:#{client}",
          "--listen-peer-urls",
          "http://127.0.0.1:#{peer}",
          "--initial-advertise-peer-urls",
          "http://127.0.0.1:#{peer}",
          "--initial-cluster",
          "t=http://127.0.0.1:#{peer}",
          "--unsafe-no-fsync"
        ]
      ])

    wait_port(client, "etcd")

    %{
      kind: :etcd,
      url: "etcd://127.0.0.1:#{client}",
      port: port,
      dir: dir,
      os_pid: Port.info(port)[:os_pid]
    }
  end

  defp as_pg(program, args) do
    if root?(),
      do:
        System.cmd("runuser", ["-u", "postgres", "--", need(program) | args],
          stderr_to_stdout: true
        ),
      else: System.cmd(need(program), args, stderr_to_stdout: true)
  end

  def postgres do
    port = free_port()
    dir = tmp("pg")
    if root?(), do: {_, 0} = System.cmd("chown", ["postgres", dir])
    data = Path.join(dir, "data")
    {out, code} = as_pg("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
    if code != 0, do: raise("initdb: #{out}")

    opts =
      "-p #{port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=#{dir} -c fsync=off"

    {out, code} =
      as_pg("pg_ctl", ["-D", data, "-l", Path.join(dir, "log"), "-w", "-o", opts, "start"])

    if code != 0, do: raise("pg_ctl start: #{out}")

    %{
      kind: :postgres,
      url: "postgres://postgres@127.0.0.1:#{port}/postgres",
      port: port,
      dir: dir,
      data: data
    }
  end

  defp root?, do: match?({"0\n", 0}, System.cmd("id", ["-u"]))

  def stop(%{kind: :redis, port: port, dir: dir}) do
    System.cmd(need("redis-cli"), ["-p", "#{port}", "shutdown", "nosave"], stderr_to_stdout: true)
    File.rm_rf!(dir)
  end

  def stop(%{kind: :etcd, os_pid: pid, dir: dir}) do
    System.cmd("kill", ["-9", "#{pid}"])
    File.rm_rf!(dir)
  end

  def stop(%{kind: :postgres, data: data, dir: dir}) do
    as_pg("pg_ctl", ["-D", data, "-m", "immediate", "stop"])
    File.rm_rf!(dir)
  end
end
