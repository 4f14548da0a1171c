// Members and invitations as tools (invite_member, list_members, update_member, remove_member,
// cancel_invitation) over REST and MCP with an owner's keys, and every refusal: reviewers,
// viewers, read-only keys, other workspaces. The invitation link is single use (also when two
// acceptances race), expires after 7 days and is replaced by a new invitation; a role change
// takes effect at once; a removal ends the member's sessions and makes their keys and OAuth
// tokens answer 401 at once.
import t from 'tap'
import { addMember, addProject, bearer, buildTestApp, fixedClock, PUBLIC_URL, seedWorkspace } from '../helpers/app.ts'
import { Agent } from '../console/helpers.ts'
import { createKey } from '../../bin/admin.ts'
import { hashKey } from '../../db/keys.ts'
import { hashPassword, verifyPassword } from '../../core/passwords.ts'
import { rowsOf } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'

const NOW = '2026-11-20T12:00:00.000Z'
const now = fixedClock(NOW)
const app = await buildTestApp(t, { now })
const ws = await seedWorkspace(app)
const other = await seedWorkspace(app)
const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second' })
const reviewer = await addMember(app, ws.project.id, 'reviewer', 'rev@example.com')
const viewer = await addMember(app, ws.project.id, 'viewer', 'viewer@example.com')
const readOnly = (await createKey(app, { email: ws.user.email, kind: 'service', readOnly: true })).key
const project = ws.project.slug

async function call(name: string, args: Record<string, unknown>, key = ws.keys.service) {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
  return { status: res.statusCode, body: res.json() as { result?: any; error?: { code: string; message: string } } }
}
/** A tools/call over MCP (2025-11-25), its result text parsed. */
async function mcp(name: string, args: Record<string, unknown>, key = ws.keys.service) {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { host: new URL(PUBLIC_URL).host, ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  })
  const result = res.json().result as { isError?: boolean; content: { text: string }[] }
  return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text) }
}
const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1)

t.test('invite_member: a link shown once, stored as a hash, valid for 7 days', async (t) => {
  const res = await call('invite_member', { email: 'New@Example.com', projects: [{ project, role: 'reviewer' }, { project: 'second', role: 'viewer' }] })
  t.equal(res.status, 200, JSON.stringify(res.body))
  const r = res.body.result
  t.match(r, { id: /^inv_/, email: 'new@example.com', created_at: NOW, expires_at: '2026-11-27T12:00:00.000Z', mailed: false })
  t.same(r.projects, [{ project, id: ws.project.id, name: 'Demo project', role: 'reviewer' }, { project: 'second', id: second.id, name: 'Second', role: 'viewer' }])
  t.match(r.link, new RegExp(`^${PUBLIC_URL}/console/invite/gdv_[0-9A-Za-z]{38}$`))
  const stored = rowsOf<{ token_hash: string }>(await app.db.execute(sql`select token_hash from invitations where id = ${r.id}`))
  t.same(stored, [{ token_hash: hashKey(tokenOf(r.link)) }], 'only the hash of the token is stored')
  const dump = JSON.stringify(rowsOf(await app.db.execute(sql`select * from invitations`)))
  t.notMatch(dump, tokenOf(r.link), 'the token is nowhere in the table')

  const listed = await call('list_members', {})
  t.equal(listed.status, 200)
  const invitation = listed.body.result.invitations.find((i: { email: string }) => i.email === 'new@example.com')
  t.match(invitation, { id: r.id, invited_by: ws.user.email, expires_at: '2026-11-27T12:00:00.000Z', expired: false })
  t.notOk('link' in invitation, 'a listing never shows the link')
  t.notMatch(JSON.stringify(listed.body), 'gdv_', 'nor any token')
  t.same(listed.body.result.members.map((m: { email: string; you: boolean }) => [m.email, m.you]), [[ws.user.email, true], ['rev@example.com', false], ['viewer@example.com', false]])
  t.same(listed.body.result.members[1].projects, [{ project, id: ws.project.id, name: 'Demo project', role: 'reviewer' }])
})

t.test('invite_member is refused to whoever does not own every project named', async (t) => {
  const args = { email: 'someone@example.com', projects: [{ project, role: 'viewer' }] }
  for (const [who, key, status, code] of [
    ['a reviewer', reviewer.keys.service, 403, 'forbidden'],
    ['a viewer', viewer.keys.service, 403, 'forbidden'],
    ['a read-only key of the owner', readOnly, 403, 'forbidden'],
  ] as const) {
    const res = await call('invite_member', args, key)
    t.equal(res.status, status, who)
    t.equal(res.body.error?.code, code, who)
  }
  const theirs = await call('invite_member', { email: 'someone@example.com', projects: [{ project: other.project.id, role: 'viewer' }] })
  t.equal(theirs.status, 404, "another workspace's project is not found")
  const oneOfTwo = await call('invite_member', { email: 'someone@example.com', projects: [{ project, role: 'viewer' }, { project: 'second', role: 'viewer' }] }, reviewer.keys.service)
  t.equal(oneOfTwo.status, 403)
  const twice = await call('invite_member', { email: 'someone@example.com', projects: [{ project, role: 'viewer' }, { project: ws.project.id, role: 'owner' }] })
  t.equal(twice.status, 400)
  t.same(twice.body.error, { code: 'invalid_arguments', message: `Invalid arguments — projects[1].project: names project '${project}' again (it is projects[0]).`, details: [{ path: 'projects[1].project', message: `names project '${project}' again (it is projects[0])` }] })
  const member = await call('invite_member', { email: 'REV@example.com', projects: [{ project: 'second', role: 'viewer' }] })
  t.equal(member.status, 409)
  t.match(member.body.error?.message, /already a member of this workspace: use update_member/)
  const elsewhere = await call('invite_member', { email: other.user.email, projects: [{ project, role: 'viewer' }] })
  t.equal(elsewhere.status, 409)
  t.match(elsewhere.body.error?.message, /account in another workspace/)
  t.equal(rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from invitations where email = 'someone@example.com'`))[0]!.n, 0, 'no invitation was made')
})

t.test('over MCP: the same tools, results and refusals', async (t) => {
  const made = await mcp('invite_member', { email: 'mcp@example.com', projects: [{ project, role: 'viewer' }] })
  t.notOk(made.isError)
  t.match(made.body, { id: /^inv_/, email: 'mcp@example.com', link: /\/console\/invite\/gdv_/, mailed: false })
  const refused = await mcp('invite_member', { email: 'mcp2@example.com', projects: [{ project, role: 'viewer' }] }, reviewer.keys.mcp)
  t.ok(refused.isError)
  t.equal(refused.body.error.code, 'forbidden')
  const listed = await mcp('list_members', {})
  t.notOk(listed.isError)
  t.ok(listed.body.invitations.some((i: { email: string }) => i.email === 'mcp@example.com'))
  const asViewer = await mcp('list_members', {}, viewer.keys.mcp)
  t.notOk(asViewer.isError, 'any member may list')
  t.same(asViewer.body.invitations, [], 'but sees no invitations: they own no project')
  t.ok(asViewer.body.members.some((m: { email: string }) => m.email === ws.user.email))
  const cancelled = await mcp('cancel_invitation', { id: made.body.id })
  t.same(cancelled.body, { id: made.body.id, email: 'mcp@example.com', cancelled: true })
  const again = await mcp('cancel_invitation', { id: made.body.id })
  t.equal(again.body.error.code, 'not_found')
})

t.test('another workspace sees none of it', async (t) => {
  const listed = await call('list_members', {}, other.keys.service)
  t.same(listed.body.result.members.map((m: { email: string }) => m.email), [other.user.email])
  t.same(listed.body.result.invitations, [])
  const pending = await app.repos.members.pending(ws.workspace.id)
  const cancel = await call('cancel_invitation', { id: pending[0]!.id }, other.keys.service)
  t.equal(cancel.status, 404)
  const update = await call('update_member', { email: 'rev@example.com', project: other.project.id, role: 'owner' }, other.keys.service)
  t.equal(update.status, 404, 'their owner does not find our member')
  const remove = await call('remove_member', { email: 'rev@example.com' }, other.keys.service)
  t.equal(remove.status, 404)
})

t.test('the link: single use, even when two acceptances race; replaced by a new invitation; cancelled', async (t) => {
  const passwordHash = await hashPassword('a long enough password', app.passwordHashCost)
  const first = (await call('invite_member', { email: 'race@example.com', projects: [{ project, role: 'reviewer' }] })).body.result
  const replacement = (await call('invite_member', { email: 'race@example.com', projects: [{ project, role: 'viewer' }] })).body.result
  t.not(tokenOf(first.link), tokenOf(replacement.link))
  t.equal((await app.repos.members.findByToken(hashKey(tokenOf(first.link)), now()))?.state, 'cancelled', 'the earlier link stops working')
  t.same(await app.repos.members.accept({ tokenHash: hashKey(tokenOf(first.link)), passwordHash, now: now() }), { ok: false, reason: 'gone' })
  const pending = (await call('list_members', {})).body.result.invitations.filter((i: { email: string }) => i.email === 'race@example.com')
  t.same(pending.map((i: { id: string }) => i.id), [replacement.id], 'one pending invitation per email')

  const both = await Promise.all([0, 1].map(() => app.repos.members.accept({ tokenHash: hashKey(tokenOf(replacement.link)), passwordHash, now: now() })))
  t.same(both.map((r) => r.ok).sort(), [false, true], 'one acceptance wins')
  t.equal((await app.repos.members.findByToken(hashKey(tokenOf(replacement.link)), now()))?.state, 'accepted')
  const user = await app.repos.users.findByEmail('race@example.com')
  t.ok(user, 'the account exists once')
  t.equal(await app.repos.users.role(user!.id, ws.project.id), 'viewer', 'with the role of the invitation that was not replaced')
  t.ok(await verifyPassword('a long enough password', user!.passwordHash))
  t.ok(user!.passwordChangedAt)

  const third = (await call('invite_member', { email: 'cancel@example.com', projects: [{ project, role: 'viewer' }] })).body.result
  const cancel = await call('cancel_invitation', { id: third.id })
  t.same(cancel.body.result, { id: third.id, email: 'cancel@example.com', cancelled: true })
  t.equal((await app.repos.members.findByToken(hashKey(tokenOf(third.link)), now()))?.state, 'cancelled')
  t.same(await app.repos.members.accept({ tokenHash: hashKey(tokenOf(third.link)), passwordHash, now: now() }), { ok: false, reason: 'gone' })
  const byReviewer = await call('cancel_invitation', { id: (await call('invite_member', { email: 'x@example.com', projects: [{ project, role: 'viewer' }] })).body.result.id }, reviewer.keys.service)
  t.equal(byReviewer.status, 403, 'a reviewer cannot cancel')
})

t.test('the link expires after 7 days', async (t) => {
  const made = (await call('invite_member', { email: 'late@example.com', projects: [{ project, role: 'viewer' }] })).body.result
  const hash = hashKey(tokenOf(made.link))
  now.set('2026-11-27T11:59:59.000Z')
  t.equal((await app.repos.members.findByToken(hash, now()))?.state, 'pending', 'valid a second before')
  now.set('2026-11-27T12:00:00.000Z')
  t.equal((await app.repos.members.findByToken(hash, now()))?.state, 'expired')
  const listed = (await call('list_members', {})).body.result.invitations.find((i: { id: string }) => i.id === made.id)
  t.equal(listed.expired, true, 'listed as expired')
  t.same(await app.repos.members.accept({ tokenHash: hash, passwordHash: 'x', now: now() }), { ok: false, reason: 'gone' })
  t.notOk(await app.repos.users.findAnyByEmail('late@example.com'))
  const again = await call('invite_member', { email: 'late@example.com', projects: [{ project, role: 'viewer' }] })
  t.equal(again.status, 200, 'an expired invitation is replaced by a new one')
  now.set(NOW)
})

t.test('update_member: a role change takes effect at once; a project keeps an owner', async (t) => {
  const opp = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${project}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'partnership', key_information: 'k', reason: 'r', suggested_action: 's' } })
  const eventId = opp.json().event_id
  const review = () => call('review_opportunity', { project, event_id: eventId, status: 'reviewing' }, reviewer.keys.service)
  t.equal((await review()).status, 200, 'a reviewer reviews')
  const res = await call('update_member', { email: 'rev@example.com', project, role: 'viewer' })
  t.same(res.body.result, { email: 'rev@example.com', project, project_id: ws.project.id, role: 'viewer', previous_role: 'reviewer' })
  const refused = await review()
  t.equal(refused.status, 403, 'demoted to viewer: reviewing is refused at once')
  t.equal(refused.body.error?.code, 'review_access_required')
  const mcpRefused = await mcp('review_opportunity', { project, event_id: eventId, status: 'done' }, reviewer.keys.mcp)
  t.equal(mcpRefused.body.error.code, 'review_access_required', 'over MCP too')

  const added = await call('update_member', { email: 'rev@example.com', project: 'second', role: 'reviewer' })
  t.equal(added.body.result.previous_role, null, 'a member with no role there is added')
  t.equal(await app.repos.users.role(reviewer.user.id, second.id), 'reviewer')

  const last = await call('update_member', { email: ws.user.email, project, role: 'viewer' })
  t.equal(last.status, 409)
  t.match(last.body.error?.message, /last owner of project/)
  t.equal(await app.repos.users.role(ws.user.id, ws.project.id), 'owner', 'nothing changed')
  for (const [who, key] of [['a reviewer', reviewer.keys.service], ['a viewer', viewer.keys.service], ['a read-only key', readOnly]] as const) {
    const r = await call('update_member', { email: 'viewer@example.com', project, role: 'owner' }, key)
    t.equal(r.status, 403, who)
  }
  const nobody = await call('update_member', { email: 'nobody@example.com', project, role: 'viewer' })
  t.equal(nobody.status, 404)
  // A second owner, then the first may step down.
  t.equal((await call('update_member', { email: 'viewer@example.com', project: 'second', role: 'owner' })).status, 200)
  t.equal((await call('update_member', { email: ws.user.email, project: 'second', role: 'reviewer' })).status, 200, 'not the last owner any more')
  t.equal((await call('update_member', { email: ws.user.email, project: 'second', role: 'owner' }, viewer.keys.service)).body.result.role, 'owner', 'the new owner gives it back')
})

t.test('remove_member: from a project, and from the workspace at once: sessions, keys, OAuth', async (t) => {
  const member = await addMember(app, ws.project.id, 'reviewer', 'leaving@example.com')
  await app.repos.users.setMembership({ userId: member.user.id, projectId: second.id, role: 'viewer' })
  // A console session, and an OAuth grant with its tokens.
  const browser = new Agent(app)
  await browser.signIn('leaving@example.com', member.user.password)
  t.equal((await browser.get('/console')).statusCode, 200)
  const { client } = await app.repos.oauth.registerClient({ name: 'An agent', redirectUris: ['http://127.0.0.1:9/cb'], authMethod: 'none', now: now() })
  const code = await app.repos.oauth.authorize({ clientId: client.id, userId: member.user.id, workspaceId: ws.workspace.id, resource: `${PUBLIC_URL}/mcp`, scope: 'mcp', redirectUri: 'http://127.0.0.1:9/cb', codeChallenge: 'x', now: now() })
  const redeemed = await app.repos.oauth.redeemCode(code, now(), () => null)
  if (!('tokens' in redeemed)) throw new Error('no tokens')
  const oauth = redeemed.tokens!
  t.equal((await call('list_projects', {}, oauth.accessToken)).status, 200, 'the OAuth token works')
  t.equal((await call('list_projects', {}, member.keys.service)).status, 200)

  const fromProject = await call('remove_member', { email: 'leaving@example.com', from_project: 'second' })
  t.same(fromProject.body.result, { email: 'leaving@example.com', removed_from: 'project', project: 'second', sessions_ended: 0, keys_revoked: 0, oauth_grants_revoked: 0 })
  t.equal((await call('get_project', { project: 'second' }, member.keys.service)).status, 404, 'the project is out of reach at once')
  t.equal((await call('get_project', { project }, member.keys.service)).status, 200, 'the other one is not')
  t.equal((await call('remove_member', { email: 'leaving@example.com', from_project: 'second' })).status, 404, 'not a member there any more')
  t.equal((await call('remove_member', { email: ws.user.email, from_project: project })).status, 409, 'the last owner stays')

  for (const [who, key] of [['a reviewer', reviewer.keys.service], ['a viewer', viewer.keys.service], ['a read-only key', readOnly]] as const) {
    const r = await call('remove_member', { email: 'leaving@example.com' }, key)
    t.equal(r.status, 403, who)
  }
  t.equal((await call('remove_member', { email: ws.user.email })).status, 409, 'nobody removes themselves')

  const removed = await call('remove_member', { email: 'leaving@example.com' })
  t.same(removed.body.result, { email: 'leaving@example.com', removed_from: 'workspace', project: null, sessions_ended: 1, keys_revoked: 3, oauth_grants_revoked: 1 })
  for (const [what, key] of [['service key', member.keys.service], ['OAuth token', oauth.accessToken]] as const) {
    const res = await call('list_projects', {}, key)
    t.equal(res.status, 401, `the ${what} answers 401 at once`)
  }
  const mcpKey = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/opportunities`, headers: bearer(member.keys.mcp) })
  t.equal(mcpKey.statusCode, 401, 'the MCP key answers 401')
  const page = await browser.get('/console')
  t.equal(page.statusCode, 302, 'the console session is over')
  t.match(page.headers.location, /^\/console\/login/)
  const refresh = await app.repos.oauth.refresh(oauth.refreshToken, client.id, now())
  t.ok('error' in refresh, 'the refresh token is refused')
  const signIn = await new Agent(app).submit('/console/login', '/console/login', { email: 'leaving@example.com', password: member.user.password })
  t.equal(signIn.statusCode, 401, 'they cannot sign in again')
  t.notOk((await call('list_members', {})).body.result.members.some((m: { email: string }) => m.email === 'leaving@example.com'), 'no longer listed')
  t.equal((await call('remove_member', { email: 'leaving@example.com' })).status, 404, 'removing again finds nobody')
  t.ok(await app.repos.users.findAnyByEmail('leaving@example.com'), 'the account row stays (their past work keeps its author)')
})

t.test('a removed member invited again comes back with a new password', async (t) => {
  const back = await addMember(app, ws.project.id, 'reviewer', 'back@example.com')
  t.equal((await call('remove_member', { email: 'back@example.com' })).status, 200)
  const invited = await call('invite_member', { email: 'back@example.com', projects: [{ project: 'second', role: 'reviewer' }] })
  t.equal(invited.status, 200, 'a removed member may be invited')
  const accepted = await app.repos.members.accept({ tokenHash: hashKey(tokenOf(invited.body.result.link)), passwordHash: await hashPassword('my new password here', app.passwordHashCost), now: now() })
  t.equal(accepted.ok, true)
  const user = await app.repos.users.findByEmail('back@example.com')
  t.equal(user?.id, back.user.id, 'the same account')
  t.equal(await app.repos.users.role(back.user.id, second.id), 'reviewer')
  t.equal(await app.repos.users.role(back.user.id, ws.project.id), undefined, 'only the new memberships')
  t.equal((await call('list_projects', {}, back.keys.service)).status, 401, 'the old keys stay revoked')
  t.ok(await verifyPassword('my new password here', user!.passwordHash))
})

t.test('a project owner removes only members whose every project they own; the workspace owner anyone', async (t) => {
  const coOwner = await addMember(app, second.id, 'owner', 'co-owner@example.com')
  const both = await addMember(app, ws.project.id, 'viewer', 'both@example.com')
  await app.repos.users.setMembership({ userId: both.user.id, projectId: second.id, role: 'viewer' })
  const refused = await call('remove_member', { email: 'both@example.com' }, coOwner.keys.service)
  t.equal(refused.status, 403)
  t.match(refused.body.error?.message, /owner role in every project they belong to/)
  t.equal((await call('remove_member', { email: ws.user.email }, coOwner.keys.service)).status, 403, 'nor the workspace owner')
  t.equal((await call('remove_member', { email: 'both@example.com', from_project: 'second' }, coOwner.keys.service)).status, 200, 'from their own project, yes')
  const onlySecond = await addMember(app, second.id, 'reviewer', 'only-second@example.com')
  t.equal((await call('remove_member', { email: onlySecond.user.email }, coOwner.keys.service)).status, 200, 'a member of their projects only, yes')
  const lonely = await addMember(app, second.id, 'viewer', 'lonely@example.com')
  t.equal((await call('remove_member', { email: 'lonely@example.com', from_project: 'second' })).status, 200)
  const seenBy = async (key: string) => (await call('list_members', {}, key)).body.result.members.find((m: { email: string }) => m.email === 'lonely@example.com')
  t.same((await seenBy(ws.keys.service))?.projects, [], 'a member in no project is listed to the workspace owner')
  t.notOk(await seenBy(coOwner.keys.service), 'not to a project owner')
  t.notOk(await seenBy(readOnly), 'nor to a read-only key of the workspace owner')
  t.equal((await call('remove_member', { email: lonely.user.email })).status, 200, 'whom the workspace owner may remove')
  const soleOwner = await addMember(app, second.id, 'viewer', 'sole@example.com')
  const third = await addProject(app, { workspaceId: ws.workspace.id, ownerId: soleOwner.user.id, name: 'Third', slug: 'third' })
  const last = await call('remove_member', { email: 'sole@example.com' })
  t.equal(last.status, 409, 'the workspace owner cannot leave a project without an owner')
  t.match(last.body.error?.message, /last owner of third/)
  t.ok(await app.repos.users.find(soleOwner.user.id), 'nothing changed')
  t.equal(await app.repos.users.role(soleOwner.user.id, third.id), 'owner')
})
