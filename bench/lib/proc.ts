import { readFileSync } from 'node:fs';

/** Linux clock ticks per second (`getconf CLK_TCK`; 100 on every common kernel). */
const CLOCK_TICKS = 100;

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/**
 * Seconds a process's main thread has spent runnable but waiting for a CPU (schedstat's run
 * delay); 0 when it is gone or the kernel does not keep schedstat.
 */
export function mainThreadRunQueueSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return 0;
  }
}

/** VmRSS and VmHWM (peak RSS) of a process in MB; undefined when it is gone. */
export function processMemoryMb(pid: number): { rssMb: number; peakRssMb: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string): number => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = values;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy: busy / CLOCK_TICKS, total: (busy + idle + iowait) / CLOCK_TICKS };
}

/** Samples a process's RSS every `intervalMs` and keeps the highest value seen. */
export class RssSampler {
  peakMb = 0;
  samples = 0;
  private timer?: NodeJS.Timeout;

  constructor(private readonly pid: number) {}

  start(intervalMs = 100): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }

  private sample(): void {
    const memory = processMemoryMb(this.pid);
    if (!memory) return;
    this.samples++;
    this.peakMb = Math.max(this.peakMb, memory.rssMb);
  }
}
