// A Node too old to strip types (issue 25): start.js, the `growthdesk` CLI and the install step
// say so in one line (bin/node-version.js) instead of ERR_UNKNOWN_FILE_EXTENSION and a stack
// trace; start and CLI then exit 1, the install step 0 (an install that fails helps nobody).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { isSupportedNode, nodeVersionLine, supportedNodeRange } from '../bin/node-version.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  engines: { node: string }
  scripts: { start: string, prepare: string }
}

t.test("the accepted range is package.json's engines", async (t) => {
  t.equal(supportedNodeRange, pkg.engines.node)
  t.equal(pkg.engines.node, '^22.18.0 || >=24.0.0')
})

t.test('the version predicate', async (t) => {
  for (const [version, supported] of [
    ['20.20.2', false],
    ['22.17.9', false],
    ['22.18.0', true],
    ['22.20.1', true],
    ['23.11.0', false],
    ['24.0.0', true],
    ['25.1.0', true],
    ['v24.1.0', true],
    ['26.0.0-pre', true],
    ['18.20.8', false],
    ['', false],
  ] as const) t.equal(isSupportedNode(version), supported, `${version || '(empty)'}: ${supported ? 'accepted' : 'refused'}`)
  t.ok(isSupportedNode(process.versions.node), 'the Node running the tests')
})

t.test('the line', async (t) => {
  t.equal(nodeVersionLine('20.20.2'), 'growthdesk needs Node.js 22.18+ or 24+ (not 23); this is 20.20.2.')
})

// CI machines keep their own Node 20 at /usr/bin/node (the tests themselves run on 24 from PATH).
const oldNode = '/usr/bin/node'
const oldVersion = (() => {
  if (!fs.existsSync(oldNode)) return undefined
  const run = spawnSync(oldNode, ['-p', 'process.versions.node'], { encoding: 'utf8' })
  return run.status === 0 ? run.stdout.trim() : undefined
})()
const skip = oldVersion === undefined
  ? `no runnable ${oldNode}`
  : isSupportedNode(oldVersion) ? `${oldNode} is Node ${oldVersion}, not older than 22.18` : false

t.test(`an old Node (${oldNode}): one line, no stack trace`, { skip }, async (t) => {
  const argsOf = (script: string) => script.split(/\s+/).slice(1)
  const env: NodeJS.ProcessEnv = { ...process.env }
  delete env.NODE_OPTIONS // tap's loader options, for Node 24
  const cases = [
    { name: 'npm start (its flags, start.js)', args: argsOf(pkg.scripts.start), status: 1 },
    { name: 'node start.js', args: ['start.js'], status: 1 },
    { name: 'growthdesk --help', args: ['bin/growthdesk.js', '--help'], status: 1 },
    { name: "npm install's prepare step", args: argsOf(pkg.scripts.prepare), status: 0 },
  ]
  for (const { name, args, status } of cases) {
    const run = spawnSync(oldNode, args, { cwd: root, env, encoding: 'utf8', timeout: 30_000 })
    t.equal(run.stderr, `${nodeVersionLine(oldVersion!)}\n`, `${name}: the one line on stderr`)
    t.notMatch(run.stderr, /\n\s+at |ERR_UNKNOWN_FILE_EXTENSION|Error/, `${name}: no stack trace`)
    t.equal(run.stdout, '', `${name}: nothing on stdout`)
    t.equal(run.status, status, `${name}: exit code ${status}`)
  }
})
