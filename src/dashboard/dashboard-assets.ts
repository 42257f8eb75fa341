import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';

/** One file of the dashboard, held in memory with its validator. */
export interface DashboardAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
};

/**
 * The dashboard's files (`public/`, beside this file both under ts-jest and in dist, where
 * nest-cli.json copies them), read once at start. A fixed set of names is the whole lookup, so a
 * request path can never reach outside the folder.
 */
export class DashboardAssets {
  private readonly files = new Map<string, DashboardAsset>();

  constructor(readonly root: string = join(__dirname, 'public')) {
    for (const path of listFiles(root)) {
      const contentType = CONTENT_TYPES[extname(path)];
      if (!contentType) continue;
      const body = readFileSync(path);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      this.files.set(relative(root, path).split(sep).join('/'), { body, contentType, etag });
    }
    if (!this.files.has('index.html'))
      throw new Error(`dashboard: ${join(root, 'index.html')} is missing (was the build's asset copy skipped?)`);
  }

  /** The file at `path` (relative, `/`-separated), or undefined. */
  get(path: string): DashboardAsset | undefined {
    return this.files.get(path);
  }

  names(): string[] {
    return [...this.files.keys()].sort();
  }
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(join(dir, entry.name)) : entry.isFile() ? [join(dir, entry.name)] : [],
  );
}
