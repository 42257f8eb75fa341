import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileLine {
  name: string;
  selfMs: number;
  selfPct: number;
}

/** Where a frame's code lives: a package under node_modules, a file of ours, or Node itself. */
function area(url: string): string {
  if (!url) return '(native/VM)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  const ours = /\/(src|bench)\/(.*)$/.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`;
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '');
}

/**
 * Self time of a V8 .cpuprofile (node --cpu-prof), aggregated two ways: by function (name and
 * place) and by area (npm package, our file, Node internals, GC/idle).
 */
export function summarizeProfile(path: string, top = 25): { totalMs: number; functions: ProfileLine[]; areas: ProfileLine[] } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  /** A native frame (writev, Hash...) is named after the nearest JavaScript caller that has a source. */
  const callerOf = (id: number): string => {
    for (let at = parentOf.get(id); at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (frame.url && !frame.url.startsWith('node:'))
        return `${frame.functionName || '(anonymous)'} ${area(frame.url)}:${frame.lineNumber + 1}`;
    }
    return '?';
  };
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const functions = new Map<string, number>();
  const areas = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    totalUs += us;
    const native = !frame.url && !frame.functionName.startsWith('(');
    const caller = native ? callerOf(id) : '';
    const place = frame.url ? `${area(frame.url)}:${frame.lineNumber + 1}` : native ? `← ${caller}` : '';
    // The inspector serialising the profile at its end is the profiler's cost, not Hookline's.
    const name = caller.includes('bench/hookline-server') ? '(profiler)' : `${frame.functionName || '(anonymous)'} ${place}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + us);
    const where = name === '(profiler)' ? name : frame.url ? area(frame.url) : frame.functionName;
    areas.set(where, (areas.get(where) ?? 0) + us);
  }
  const lines = (map: Map<string, number>): ProfileLine[] =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: Math.round(us / 1000), selfPct: Math.round((us / totalUs) * 1000) / 10 }));
  return { totalMs: Math.round(totalUs / 1000), functions: lines(functions), areas: lines(areas) };
}

export function formatProfile(path: string, top = 25): string {
  const summary = summarizeProfile(path, top);
  const format = (lines: ProfileLine[]): string =>
    lines.map((line) => `  ${String(line.selfPct).padStart(5)} %  ${String(line.selfMs).padStart(7)} ms  ${line.name}`).join('\n');
  return `${path}: ${summary.totalMs} ms sampled\n by area:\n${format(summary.areas)}\n by function:\n${format(summary.functions)}`;
}

// `node -r ts-node/register/transpile-only bench/lib/cpuprofile.ts <file.cpuprofile> [top]`
if (require.main === module) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    console.error('usage: bench/lib/cpuprofile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(formatProfile(file, top ? Number(top) : 25));
}
