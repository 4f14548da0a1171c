// A migrated embedded database to start from. PGlite's initdb is most of a first start (about
// 5 s of WebAssembly); the same folder, made once — by `npm install` (the `prepare` script,
// bin/prepare.js) or by the test run — and copied into an empty data folder, opens in under
// a second. The copy is of the schema only: the first start's workspace, keys and secrets are
// made afterwards in each data folder, as before.
//
// The template lives in node_modules/.cache/growthdesk/, named by a hash of the migrations and
// of PGlite's package.json, so new migrations or another PGlite version make a new one and a
// stale one is never used. Without one, a first start runs initdb and the migrations.
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { SECRETS_KEY_FILE } from './secret-box.ts'

const root = path.join(import.meta.dirname, '..')
export const migrationsFolder = path.join(import.meta.dirname, 'migrations')
const cacheFolder = path.join(root, 'node_modules', '.cache', 'growthdesk')

/** What a template depends on: every migration file and the PGlite release. */
export function templateKey(): string {
  const hash = createHash('sha256')
  for (const file of fs.readdirSync(migrationsFolder, { recursive: true, encoding: 'utf8' }).sort()) {
    const full = path.join(migrationsFolder, file)
    if (fs.statSync(full).isFile()) hash.update(file).update(fs.readFileSync(full))
  }
  hash.update(fs.readFileSync(path.join(root, 'node_modules', '@electric-sql', 'pglite', 'package.json')))
  return hash.digest('hex').slice(0, 16)
}

/** Where the template of these migrations and this PGlite is (or would be). */
export function templateFolder(): string {
  return path.join(cacheFolder, `pglite-${templateKey()}`)
}

/**
 * The template folder, built by `build` (which makes a migrated database in the folder it is
 * given) when there is none yet. Processes racing to build it each build their own and the first
 * rename wins: a folder at the template's name is always complete.
 */
export async function ensureTemplate(build: (folder: string) => Promise<void>): Promise<string> {
  const folder = templateFolder()
  if (fs.existsSync(folder)) return folder
  fs.mkdirSync(cacheFolder, { recursive: true })
  const building = `${folder}.${process.pid}.${randomBytes(4).toString('hex')}.building`
  try {
    await build(building)
    fs.renameSync(building, folder)
  } catch (err) {
    fs.rmSync(building, { recursive: true, force: true })
    if (!fs.existsSync(folder)) throw err // not just another process winning the race
  }
  // Templates of older migrations or another PGlite are never used again (40 MB each).
  for (const entry of fs.readdirSync(cacheFolder)) {
    const stale = entry.startsWith('pglite-') && !entry.endsWith('.building') && entry !== path.basename(folder)
    if (stale) fs.rmSync(path.join(cacheFolder, entry), { recursive: true, force: true })
  }
  return folder
}

/** Written before a copy and removed after it: a folder holding it has an interrupted copy. */
const COPYING = 'growthdesk.copying'

/**
 * Fills an empty data folder (the caller holds its lock, `keep`) with a copy of the template.
 * False when there is no template, or when the folder already holds anything else: an existing
 * database, or files that are not ours, are left alone (a secrets key file put there before the
 * first start is not "anything else", and stays). A copy that was interrupted is removed and
 * made again.
 */
export function copyTemplate(dataDir: string, keep: string): boolean {
  // The secrets key file may be put there before the first start (plugins/secrets.ts): it stays.
  const entries = fs.readdirSync(dataDir).filter((entry) => entry !== keep && entry !== SECRETS_KEY_FILE)
  if (entries.includes(COPYING)) {
    for (const entry of entries) fs.rmSync(path.join(dataDir, entry), { recursive: true, force: true })
  } else if (entries.length > 0) {
    return false
  }
  const template = templateFolder()
  if (!fs.existsSync(template)) return false
  fs.writeFileSync(path.join(dataDir, COPYING), '')
  fs.cpSync(template, dataDir, { recursive: true })
  fs.rmSync(path.join(dataDir, COPYING))
  return true
}
