import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/**
 * Transpiles src/ and bench/ (no type check, like ts-node's transpile-only) into `outDir`, so that
 * Hookline and the load generators run as plain JavaScript: no TypeScript compiler in their memory
 * (it would add tens of MB to the measured RSS) and no compile work during the measurement.
 * Other files under src/ (dashboard assets) are copied; node_modules is linked.
 */
export function transpileProject(root: string, outDir: string): { files: number; ms: number } {
  const started = Date.now();
  const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), (path) => ts.sys.readFile(path));
  if (configFile.error) throw new Error(ts.flattenDiagnosticMessageText(configFile.error.messageText, '\n'));
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const compilerOptions: ts.CompilerOptions = {
    ...parsed.options,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    sourceMap: false,
    inlineSourceMap: true,
    declaration: false,
    noEmit: false,
    outDir: undefined,
    rootDir: undefined,
  };
  let files = 0;
  for (const top of ['src', 'bench']) {
    for (const file of walk(join(root, top))) {
      const rel = relative(root, file);
      if (rel.startsWith(join('bench', 'profiles'))) continue;
      const target = join(outDir, rel);
      mkdirSync(dirname(target), { recursive: true });
      if (file.endsWith('.ts') && !file.endsWith('.d.ts')) {
        if (/\.(spec|e2e-spec)\.ts$/.test(file)) continue;
        const output = ts.transpileModule(readFileSync(file, 'utf8'), { compilerOptions, fileName: file });
        writeFileSync(target.replace(/\.ts$/, '.js'), output.outputText);
        files++;
      } else if (top === 'src') {
        copyFileSync(file, target);
      }
    }
  }
  symlinkSync(join(root, 'node_modules'), join(outDir, 'node_modules'), 'dir');
  return { files, ms: Date.now() - started };
}

function* walk(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}
