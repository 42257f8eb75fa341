import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, mkdtemp, rm, rmdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The user the embedded server runs as when Hookline runs as root (PostgreSQL refuses root). */
export interface RunAs {
  uid: number;
  gid: number;
}

/** How the embedded server's processes are started, and the paths they see. */
export interface ServerIsolation {
  /** `same-user`: Hookline is not root; `drop`: root, paths open to the server's user; `namespace`: root, paths bind-mounted. */
  readonly kind: 'same-user' | 'drop' | 'namespace';
  /** The binaries' directory (bin/, lib/, share/) as the server sees it. */
  readonly native: string;
  /** The cluster's directory as the server sees it. */
  readonly pgData: string;
  /** A directory whose files the server's user can open by name, at the same path for both sides (initdb's password file). */
  readonly handover: string;
  /** The command that runs `binary` (a path as the server sees it) with `args`. */
  command(binary: string, args: string[]): { file: string; args: string[]; ids: { uid?: number; gid?: number } };
  /** Removes what was made on the host for the server (a namespace's empty mount points). */
  dispose(): Promise<void>;
}

/** A path the server's user cannot enter, and nothing to work around it with. */
export class UnreachablePathError extends Error {
  override readonly name = 'UnreachablePathError';

  constructor(readonly directory: string) {
    super(`uid ${String(UNPRIVILEGED_ID)}, which runs the embedded PostgreSQL, cannot enter ${directory}`);
  }
}

export const UNPRIVILEGED_ID = 65534;

type StatOf = (path: string) => Promise<{ uid: number; gid: number; mode: number }>;

/** The first directory on the way to `path` (itself included) that `who` may not enter, or undefined. */
export async function firstClosedDirectory(path: string, who: RunAs, statOf: StatOf = stat): Promise<string | undefined> {
  const chain: string[] = [];
  for (let current = resolve(path); ; current = dirname(current)) {
    chain.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const directory of chain) {
    const info = await statOf(directory);
    // POSIX looks at one class only: the owner's bits, else the group's, else the others'.
    const search = info.uid === who.uid ? 0o100 : info.gid === who.gid ? 0o010 : 0o001;
    if ((info.mode & search) === 0) return directory;
  }
  return undefined;
}

/**
 * setpriv's options for the server. As root: the unprivileged uid and gid, no supplementary
 * groups, and empty inheritable and bounding sets, so that no capability survives and none can be
 * regained (the kernel clears the permitted and effective sets when uid 0 is left). Always: no new
 * privileges through a set-user-ID program (`COPY … PROGRAM` as the embedded superuser cannot
 * become root through `su`), and SIGINT when Hookline dies, so no server outlives a SIGKILL.
 */
export function setprivOptions(runAs: RunAs | undefined): string[] {
  const drop = runAs ? [`--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'] : [];
  return [...drop, '--no-new-privs', '--pdeathsig=SIGINT'];
}

/**
 * `unshare` arguments that run `inner` in a mount namespace of its own where each `[source,
 * target]` is bind-mounted: the server's user reaches its directories through targets it may
 * enter, and nothing else of the paths above them. The mounts go when the last process in the
 * namespace ends; the host never sees them.
 */
export function namespaceArgs(binds: ReadonlyArray<readonly [string, string]>, inner: string[]): string[] {
  const script = 'while [ "$1" != -- ]; do mount --bind -- "$1" "$2" || exit 1; shift 2; done; shift; exec "$@"';
  return ['--mount', '--propagation', 'private', '--', 'sh', '-c', script, 'hookline-postgres', ...binds.flat(), '--', ...inner];
}

/**
 * Chooses how to run the server whose binaries are in `binDir` and whose cluster is `pgData`. Not
 * root: as Hookline's own user. Root: as uid 65534 with no capability; when that uid cannot enter a
 * directory above the binaries or the cluster (a checkout below /root, a private temporary
 * directory), through a mount namespace; when namespaces are not allowed either (a container
 * without CAP_SYS_ADMIN), {@link UnreachablePathError}. `force` picks one way (tests).
 */
export async function planIsolation(
  binDir: string,
  pgData: string,
  runAs: RunAs | undefined,
  force?: 'drop' | 'namespace',
): Promise<ServerIsolation> {
  const native = dirname(binDir);
  const dataDir = dirname(pgData);
  const setpriv = hasProgram('setpriv');
  if (!runAs) {
    return {
      kind: 'same-user',
      native,
      pgData,
      handover: dataDir,
      command: (binary, args) =>
        setpriv
          ? { file: 'setpriv', args: [...setprivOptions(undefined), '--', binary, ...args], ids: {} }
          : { file: binary, args, ids: {} },
      dispose: async () => undefined,
    };
  }
  const closed = (await firstClosedDirectory(native, runAs)) ?? (await firstClosedDirectory(dataDir, runAs));
  if (force === 'drop' || (force === undefined && closed === undefined)) {
    if (closed !== undefined) throw new UnreachablePathError(closed);
    return {
      kind: 'drop',
      native,
      pgData,
      handover: dataDir,
      // Without setpriv, Node switches the uid itself: the kernel still clears the capabilities.
      command: (binary, args) =>
        setpriv
          ? { file: 'setpriv', args: [...setprivOptions(runAs), '--', binary, ...args], ids: {} }
          : { file: binary, args, ids: runAs },
      dispose: async () => undefined,
    };
  }
  if (!setpriv || !namespacesAllowed()) throw new UnreachablePathError(closed ?? dataDir);
  const mounts = await mountPoints(pgData);
  const seen = { native: join(mounts, 'native'), pgData: join(mounts, 'data') };
  const binds = [
    [native, seen.native],
    [pgData, seen.pgData],
  ] as const;
  return {
    kind: 'namespace',
    ...seen,
    handover: mounts,
    command: (binary, args) => ({
      file: 'unshare',
      args: namespaceArgs(binds, ['setpriv', ...setprivOptions(runAs), '--', binary, ...args]),
      ids: {},
    }),
    // One directory at a time and never recursively: should a mount ever show on the host, the
    // removal fails rather than reach into the cluster.
    dispose: async () => {
      await rm(join(mounts, 'initdb.pwfile'), { force: true });
      for (const directory of [seen.native, seen.pgData, mounts]) await rmdir(directory).catch(() => undefined);
    },
  };
}

/**
 * The host directory of a namespace's mount points, one per cluster, so that a Hookline killed
 * with SIGKILL leaves at most one behind, reused by the next start. Mode 711: the server's user
 * may pass through it (to initdb's password file, by name) but not list it. A directory of that
 * name that root does not own, or a link, is left alone for a fresh one.
 */
async function mountPoints(pgData: string): Promise<string> {
  const named = join(tmpdir(), `hookline-postgres-${createHash('sha256').update(resolve(pgData)).digest('hex').slice(0, 16)}`);
  const mine = await mkdir(named, { mode: 0o711 }).then(
    () => true,
    async () => {
      const info = await lstat(named).catch(() => undefined);
      return info !== undefined && info.isDirectory() && info.uid === process.getuid?.();
    },
  );
  const mounts = mine ? named : await mkdtemp(join(tmpdir(), 'hookline-postgres-'));
  await chmod(mounts, 0o711);
  for (const point of ['native', 'data']) await mkdir(join(mounts, point), { recursive: true });
  return mounts;
}

const available = new Map<string, boolean>();

function hasProgram(name: string): boolean {
  if (!available.has(name)) available.set(name, spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0);
  return available.get(name)!;
}

function namespacesAllowed(): boolean {
  if (!available.has('mount namespaces')) {
    const probe = spawnSync('unshare', ['--mount', '--propagation', 'private', '--', 'true'], { stdio: 'ignore' });
    available.set('mount namespaces', probe.status === 0);
  }
  return available.get('mount namespaces')!;
}
