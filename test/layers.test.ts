// The import graph of the source tree: every module imports only its own layer or the layers
// below it, and no module reaches itself again through its imports (no cycles).
//
//   schemas/ 0  ←  db/ 1  ←  config.ts 1.5  ←  core/ 2  ←  tools/, docs/ 3  ←  routes/, plugins/, bin/ 4  ←  app.ts, server.ts 5
//
// config.ts only reads the environment, but it takes the `DatabaseConfig` type from
// db/client.ts (the code that opens the database owns its settings): it sits just above db/,
// which must never import it, and below everything that does.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'

const root = path.join(import.meta.dirname, '..')
const DIRS: Record<string, number> = { schemas: 0, db: 1, core: 2, tools: 3, docs: 3, routes: 4, plugins: 4, bin: 4 }
const TOP: Record<string, number> = { 'config.ts': 1.5, 'app.ts': 5, 'server.ts': 5, 'index.ts': 6 }

/** Imports that cross a layer upwards on purpose, each with its reason. */
const ALLOWED_UPWARD: Record<string, string> = {
  'bin/cli.ts -> app.ts': 'the CLI builds the same app as the server to run admin commands on the configured database',
  'bin/conformance.ts -> app.ts': '`npm run conformance` builds the app with its conformance fixtures on, in front of the official suite',
}

/** Same-layer directories that must not import each other's modules (from -> to). */
const SIDEWAYS = [['plugins', 'routes']]

function sourceFiles(): string[] {
  const files = Object.keys(TOP)
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(rel)
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(rel)
    }
  }
  for (const dir of Object.keys(DIRS)) walk(dir)
  return files.sort()
}

export function layerOf(file: string): number | undefined {
  if (file in TOP) return TOP[file]
  return DIRS[file.split('/')[0]!]
}

/** Relative specifiers a module imports: `import … from`, `export … from`, `import '…'` and `import('…')`. */
export function relativeImports(source: string): string[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .split('\n')
    .filter((line) => !line.trim().startsWith('//'))
    .join('\n')
  const specs: string[] = []
  const patterns = [
    /(?:^|[\n;])\s*(?:import|export)\s[^'"`;]*?\sfrom\s*['"](\.{1,2}\/[^'"]+)['"]/g,
    /(?:^|[\n;])\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/g,
    /\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
  ]
  for (const pattern of patterns) for (const m of code.matchAll(pattern)) specs.push(m[1]!)
  return specs
}

/** The graph: each source file and the source files it imports (outside files are left out). */
export function importGraph(files: string[], read: (file: string) => string): Map<string, string[]> {
  const known = new Set(files)
  const graph = new Map<string, string[]>()
  for (const file of files) {
    const targets = relativeImports(read(file)).map((spec) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec)))
    graph.set(file, [...new Set(targets.filter((target) => known.has(target)))])
  }
  return graph
}

export function upwardImports(graph: Map<string, string[]>): string[] {
  const offenders: string[] = []
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const edge = `${file} -> ${target}`
      const from = layerOf(file)!
      const to = layerOf(target)!
      if (to > from && !(edge in ALLOWED_UPWARD)) offenders.push(`${edge} (layer ${from} imports layer ${to})`)
      for (const [a, b] of SIDEWAYS) if (file.startsWith(`${a}/`) && target.startsWith(`${b}/`)) offenders.push(`${edge} (${a}/ must not import ${b}/)`)
    }
  }
  return offenders
}

/** Every cycle found by a depth-first search, each as the path that closes it. */
export function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return found
}

const files = sourceFiles()
const graph = importGraph(files, (file) => fs.readFileSync(path.join(root, file), 'utf8'))

t.test('the graph covers the source tree', async (t) => {
  t.ok(files.length > 80, `${files.length} source files`)
  for (const file of files) t.not(layerOf(file), undefined, `${file} has a layer`)
  t.ok(graph.get('app.ts')!.includes('plugins/database.ts'), 'static imports are read')
  t.ok(graph.get('server.ts')!.includes('app.ts'), 'dynamic imports are read')
  t.ok(graph.get('bin/cli.ts')!.includes('bin/command.ts'), 'export … from is read')
})

t.test('no module imports a higher layer', async (t) => {
  const offenders = upwardImports(graph)
  t.same(offenders, [], `upward imports:\n  ${offenders.join('\n  ')}`)
  for (const edge of Object.keys(ALLOWED_UPWARD)) {
    const [from, to] = edge.split(' -> ')
    t.ok(graph.get(from!)?.includes(to!), `the allowed exception ${edge} still exists (remove it from the list otherwise)`)
  }
})

t.test('no import cycles', async (t) => {
  const found = cycles(graph)
  t.same(found.map((c) => c.join(' -> ')), [], `cycles:\n  ${found.map((c) => c.join(' -> ')).join('\n  ')}`)
})

t.test('the checks catch what they are for', async (t) => {
  const fake = new Map<string, string>([
    ['db/a.ts', "import { x } from '../core/b.ts'\nexport const a = 1"],
    ['core/b.ts', "import type {\n  A,\n} from '../db/a.ts'\nexport const x = 2"],
    ['plugins/p.ts', "const { y } = await import('../routes/r.ts')"],
    ['routes/r.ts', "export { y } from './s.ts'"],
    ['routes/s.ts', "// import '../app.ts'\nimport './r.ts'\nexport const y = 3"],
  ])
  const g = importGraph([...fake.keys()], (file) => fake.get(file)!)
  t.same(upwardImports(g), ['db/a.ts -> core/b.ts (layer 1 imports layer 2)', 'plugins/p.ts -> routes/r.ts (plugins/ must not import routes/)'])
  t.same(cycles(g).map((c) => c.join(' -> ')), ['db/a.ts -> core/b.ts -> db/a.ts', 'routes/r.ts -> routes/s.ts -> routes/r.ts'])
})
