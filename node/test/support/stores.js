'use strict';
// Real lease stores on loopback ports for the tests: PostgreSQL 15, Redis and
// etcd from Debian (`make setup` installs them), each in a temporary
// directory, stopped and removed by stop().
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');

function need(program) {
  for (const dir of [...(process.env.PATH || '').split(':'), '/usr/lib/postgresql/15/bin', '/usr/sbin', '/usr/bin']) {
    const file = path.join(dir, program);
    if (dir && fs.existsSync(file)) return file;
  }
  throw new Error(`${program} not found: run \`make setup\``);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitPort(port, what) {
  for (let i = 0; i < 400; i++) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => { s.destroy(); resolve(true); });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${what} did not open port ${port}`);
}

const root = typeof process.getuid === 'function' && process.getuid() === 0;

function asPostgres(program, args) {
  const file = need(program);
  return root
    ? execFileSync('runuser', ['-u', 'postgres', '--', file, ...args], { stdio: 'pipe' })
    : execFileSync(file, args, { stdio: 'pipe' });
}

function tmp(name) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `nonceforge-node-${name}-`));
}

async function redis() {
  const port = await freePort();
  const dir = tmp('redis');
  execFileSync(need('redis-server'), [
    '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no',
    '--daemonize', 'yes', '--dir', dir, '--pidfile', path.join(dir, 'pid'), '--logfile', path.join(dir, 'log'),
  ]);
  await waitPort(port, 'redis');
  return { kind: 'redis', url: `redis://127.0.0.1:${port}`, port, dir };
}

async function etcd() {
  const client = await freePort();
  const peer = await freePort();
  const dir = tmp('etcd');
  const child = spawn(need('etcd'), [
    '--name', 't', '--data-dir', path.join(dir, 'data'),
    '--listen-client-urls', `http://127.0.0.1:${client}`, '--advertise-client-urls', `http://127.0.0.1:${client}`,
    '--listen-peer-urls', `http://127.0.0.1:${peer}`, '--initial-advertise-peer-urls', `http://127.0.0.1:${peer}`,
    '--initial-cluster', `t=http://127.0.0.1:${peer}`, '--unsafe-no-fsync',
  ], { stdio: 'ignore' });
  child.unref();
  await waitPort(client, 'etcd');
  return { kind: 'etcd', url: `etcd://127.0.0.1:${client}`, port: client, dir, child };
}

async function postgres() {
  const port = await freePort();
  const dir = tmp('pg');
  if (root) execFileSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const opts = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off`;
  asPostgres('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-o', opts, 'start']);
  return { kind: 'postgres', url: `postgres://postgres@127.0.0.1:${port}/postgres`, port, dir, data };
}

const START = { postgres, redis, etcd };

function start(kind) {
  return START[kind]();
}

function stop(store) {
  try {
    if (store.kind === 'redis') execFileSync(need('redis-cli'), ['-p', String(store.port), 'shutdown', 'nosave'], { stdio: 'ignore' });
    else if (store.kind === 'etcd') store.child.kill('SIGKILL');
    else asPostgres('pg_ctl', ['-D', store.data, '-m', 'immediate', 'stop']);
  } finally {
    fs.rmSync(store.dir, { recursive: true, force: true });
  }
}

module.exports = { start, stop, KINDS: Object.keys(START) };
