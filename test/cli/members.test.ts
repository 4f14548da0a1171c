// The member commands of `growthdesk admin` (invite-member, list-members, update-member,
// remove-member, cancel-invitation), run in-process through main() on a database that outlives
// each command: the same operations as the tools, the link printed once (and mailed when SMTP_URL
// is set), refusals as one line with exit 1, usage errors with exit 2.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { main } from '../../bin/cli.ts'
import { buildApp } from '../../app.ts'
import type { Database } from '../../config.ts'
import { hashKey } from '../../db/keys.ts'
import { TEST_SECRETS_KEY_TEXT, testConfig, testDatabase } from '../helpers/app.ts'
import { startMailServer } from '../helpers/mail.ts'

// Each command opens the database afresh, as a separate process would (about 2 s on PGlite).
t.setTimeout(300_000)

async function persistentDatabase(t: Test): Promise<{ env: NodeJS.ProcessEnv; database: Database }> {
  const database = await testDatabase(t)
  if (database.kind === 'postgres') return { env: { DATABASE_URL: database.url, SECRETS_KEY: TEST_SECRETS_KEY_TEXT }, database }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-cli-'))
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  return { env: { DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY_TEXT }, database: { kind: 'pglite', dataDir } }
}

async function cli(env: NodeJS.ProcessEnv, ...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) }, env })
  return { code, stdout, stderr }
}

const { env, database } = await persistentDatabase(t)
const mailbox = await startMailServer()
t.teardown(() => mailbox.close())

t.test('invite, list, change a role, remove, cancel', async (t) => {
  const ws = JSON.parse((await cli(env, 'admin', 'bootstrap', '--workspace', 'Acme', '--email', 'founder@acme.test', '--project', 'Acme App', '--json')).stdout)
  const json = async (...argv: string[]) => {
    const r = await cli(env, ...argv, '--json')
    t.equal(r.code, 0, `${argv.slice(0, 2).join(' ')}: ${r.stderr}`)
    return JSON.parse(r.stdout)
  }

  const usage = await cli(env, 'admin', 'invite-member', '--email', 'ana@acme.test', '--project', 'acme-app', '--project', 'other', '--role', 'viewer')
  t.equal(usage.code, 2)
  t.match(usage.stderr, /give one --role per --project \(2 projects, 1 role\)/)
  const badRole = await cli(env, 'admin', 'invite-member', '--email', 'ana@acme.test', '--project', 'acme-app', '--role', 'admin')
  t.equal(badRole.code, 2)
  t.match(badRole.stderr, /--role must be one of viewer, reviewer, owner, not 'admin'/)

  const invited = await json('admin', 'invite-member', '--email', 'ana@acme.test', '--project', 'acme-app', '--role', 'reviewer')
  t.match(invited, { id: /^inv_/, email: 'ana@acme.test', projects: [{ project: 'acme-app', role: 'reviewer' }], link: /^http:\/\/127\.0\.0\.1:3000\/console\/invite\/gdv_[0-9A-Za-z]{38}$/, mailed: false })
  const readable = await cli(env, 'admin', 'invite-member', '--email', 'bob@acme.test', '--project', ws.project.id, '--role', 'viewer', '--as', 'founder@acme.test')
  t.equal(readable.code, 0, readable.stderr)
  t.match(readable.stdout, /^Invited bob@acme\.test \(inv_[0-9A-Za-z]+\): acme-app viewer\.\n {2}link: {5}http:\/\/127\.0\.0\.1:3000\/console\/invite\/gdv_/)
  t.match(readable.stdout, /mailed: {3}no \(mail is not configured\): pass the link on yourself/)

  const listed = await json('admin', 'list-members', '--workspace', ws.workspace.id)
  t.equal(listed.acting_as, 'founder@acme.test')
  t.same(listed.members.map((m: { email: string }) => m.email), ['founder@acme.test'])
  t.same(listed.invitations.map((i: { email: string }) => i.email).sort(), ['ana@acme.test', 'bob@acme.test'])
  t.notMatch(JSON.stringify(listed), 'gdv_', 'never a link')

  // Ana accepts (as the console does), with the app closed again before the next command.
  {
    const app = await buildApp({ config: testConfig(database), logger: false })
    const token = invited.link.slice(invited.link.lastIndexOf('/') + 1)
    const accepted = await app.repos.members.accept({ tokenHash: hashKey(token), passwordHash: 'scrypt$1024$8$1$x$y', now: app.now() })
    t.equal(accepted.ok, true)
    await app.close()
  }
  const table = await cli(env, 'admin', 'list-members', '--workspace', ws.workspace.id)
  t.match(table.stdout, /ana@acme\.test\s+member\s+acme-app:reviewer/)
  t.match(table.stdout, /inv_[0-9A-Za-z]+\s+bob@acme\.test\s+acme-app:viewer\s+founder@acme\.test/)

  t.same(await json('admin', 'update-member', '--email', 'ana@acme.test', '--project', 'acme-app', '--role', 'viewer'), { email: 'ana@acme.test', project: 'acme-app', project_id: ws.project.id, role: 'viewer', previous_role: 'reviewer' })
  const last = await cli(env, 'admin', 'update-member', '--email', 'founder@acme.test', '--project', 'acme-app', '--role', 'viewer')
  t.equal(last.code, 1)
  t.match(last.stderr, /^growthdesk: founder@acme\.test is the last owner of project 'acme-app': make someone else owner first\.\n$/)

  t.same(await json('admin', 'remove-member', '--email', 'ana@acme.test', '--project', 'acme-app'), { email: 'ana@acme.test', removed_from: 'project', project: 'acme-app', sessions_ended: 0, keys_revoked: 0, oauth_grants_revoked: 0 })
  const removed = await cli(env, 'admin', 'remove-member', '--email', 'ana@acme.test')
  t.equal(removed.code, 0, removed.stderr)
  t.match(removed.stdout, /^Removed ana@acme\.test from the workspace: 0 session\(s\) ended, 0 key\(s\) revoked/)
  const self = await cli(env, 'admin', 'remove-member', '--email', 'founder@acme.test')
  t.equal(self.code, 1)
  t.match(self.stderr, /owns the workspace and cannot be removed/)

  const bob = (await json('admin', 'list-members', '--workspace', ws.workspace.id)).invitations[0]
  t.same(await json('admin', 'cancel-invitation', '--id', bob.id), { id: bob.id, email: 'bob@acme.test', cancelled: true })
  const again = await cli(env, 'admin', 'cancel-invitation', '--id', bob.id)
  t.equal(again.code, 1)
  t.match(again.stderr, /No open invitation with the id/)
  const unknown = await cli(env, 'admin', 'cancel-invitation', '--id', 'gdv_nope')
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /No invitation with the id gdv_nope/)
})

t.test('with SMTP_URL, the invitation is mailed too', async (t) => {
  const mailEnv = { ...env, SMTP_URL: mailbox.url, MAIL_FROM: 'growthdesk <growthdesk@example.com>' }
  const r = await cli(mailEnv, 'admin', 'invite-member', '--email', 'cleo@acme.test', '--project', 'acme-app', '--role', 'viewer', '--json')
  t.equal(r.code, 0, r.stderr)
  const invited = JSON.parse(r.stdout)
  t.equal(invited.mailed, true)
  const mail = await mailbox.next()
  t.equal(mailbox.linkIn(mail), invited.link)
  t.match(mail.text, /Acme App \(acme-app\): viewer/)
})

t.test('help', async (t) => {
  const help = await cli(env, 'help', 'admin', 'invite-member')
  t.equal(help.code, 0)
  t.match(help.stdout, 'Usage: growthdesk admin invite-member --email EMAIL --project ID_OR_SLUG [--project ID_OR_SLUG …] --role viewer|reviewer|owner [--role viewer|reviewer|owner …] [--as OWNER_EMAIL] [--json]')
  t.match(help.stdout, /--project ID_OR_SLUG\s+a project \(id prj_… or slug\) \(required\) \(may be repeated\)/)
  const admin = await cli(env, 'help', 'admin')
  for (const name of ['invite-member', 'list-members', 'update-member', 'remove-member', 'cancel-invitation']) t.match(admin.stdout, `admin ${name}`)
})
