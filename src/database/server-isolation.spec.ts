import { spawnSync } from 'node:child_process';
import { firstClosedDirectory, namespaceArgs, setprivOptions } from './server-isolation';

const nobody = { uid: 65534, gid: 65534 };

/** A file system of directories with their owner and mode. */
function tree(entries: Record<string, { uid: number; gid: number; mode: number }>) {
  return async (path: string) => {
    const entry = entries[path];
    if (!entry) throw new Error(`no ${path}`);
    return { ...entry, mode: 0o040000 | entry.mode };
  };
}

describe('firstClosedDirectory', () => {
  const root = { uid: 0, gid: 0, mode: 0o755 };

  it('finds a private directory above the target (a checkout in /root)', async () => {
    const statOf = tree({ '/': root, '/root': { uid: 0, gid: 0, mode: 0o700 }, '/root/app': root, '/root/app/.data': root });
    expect(await firstClosedDirectory('/root/app/.data', nobody, statOf)).toBe('/root');
  });

  it('answers undefined when every directory lets the user search it', async () => {
    const statOf = tree({ '/': root, '/srv': root, '/srv/hookline': { uid: 0, gid: 0, mode: 0o711 } });
    expect(await firstClosedDirectory('/srv/hookline', nobody, statOf)).toBeUndefined();
  });

  it('reads the owner’s bits for the owner and the group’s for the group, as the kernel does', async () => {
    const statOf = tree({
      '/': root,
      '/own': { uid: 65534, gid: 0, mode: 0o700 }, // only the owner may enter
      '/own/group': { uid: 0, gid: 65534, mode: 0o701 }, // others may, the group may not
    });
    expect(await firstClosedDirectory('/own', nobody, statOf)).toBeUndefined();
    expect(await firstClosedDirectory('/own/group', nobody, statOf)).toBe('/own/group');
  });
});

describe('setprivOptions', () => {
  it('as root: the unprivileged ids, no groups, empty inheritable and bounding sets, no new privileges', () => {
    expect(setprivOptions(nobody)).toEqual([
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--pdeathsig=SIGINT',
    ]);
  });

  it('as another user: no new privileges and the parent-death signal only', () => {
    expect(setprivOptions(undefined)).toEqual(['--no-new-privs', '--pdeathsig=SIGINT']);
  });
});

describe('namespaceArgs', () => {
  it('bind-mounts each pair in order, then runs the command with its own arguments intact', () => {
    const args = namespaceArgs(
      [
        ['/root/app/native', '/tmp/m/native'],
        ['/root/app/.data/postgres', '/tmp/m/data'],
      ],
      ['setpriv', '--', '/tmp/m/native/bin/postgres', '-D', '/tmp/m/data', '-c', 'unix_socket_directories='],
    );
    expect(args.slice(0, 5)).toEqual(['--mount', '--propagation', 'private', '--', 'sh']);
    // The script as sh runs it, with `mount` swapped for echo: the binds, then the command.
    const script = args[6].replace('mount --bind', 'echo mount');
    const run = spawnSync('sh', ['-c', `${script.replace('exec "$@"', 'printf "[%s]" "$@"')}`, ...args.slice(7)], { encoding: 'utf8' });
    expect(run.stdout).toBe(
      'mount -- /root/app/native /tmp/m/native\n' +
        'mount -- /root/app/.data/postgres /tmp/m/data\n' +
        '[setpriv][--][/tmp/m/native/bin/postgres][-D][/tmp/m/data][-c][unix_socket_directories=]',
    );
  });
});
