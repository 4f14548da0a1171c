// The console's Webhooks page (owners): create by Post/Redirect/Get with the secret shown once,
// send a test, the delivery log and redeliver, rotate (the new secret shown once), the failing
// warning, delete; a viewer is refused, and a webhook is acted on only through its own project.
import t from 'tap'
import { addMember, addProject, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'
import { webhooks } from '../../db/schema.ts'
import { eq } from '../../db/orm.ts'
import { sealContexts } from '../../db/secret-box.ts'

const secretOf = (html: string) => /id="new-webhook-secret">([^<]+)</.exec(html)?.[1]

t.test('console webhooks', async (t) => {
  const app = await buildTestApp(t, { config: { webhooks: { enabled: false, allowPrivateNetworks: true } } })
  const ws = await seedWorkspace(app)
  const page = `/console/projects/${ws.project.slug}/webhooks`
  const owner = new Agent(app, '10.0.8.1')
  await owner.signIn(ws.user.email, ws.user.password)

  const empty = await owner.get(page)
  t.equal(empty.statusCode, 200)
  t.match(empty.body, /No webhooks yet/)
  t.match((await owner.get(`/console/projects/${ws.project.slug}`)).body, `href="${page}"`, 'the overview links to it for an owner')

  const created = await owner.submit(page, page, { url: 'http://127.0.0.1:9/hook', events: 'opportunity.submitted', description: 'CRM' })
  t.equal(created.statusCode, 303)
  t.equal(created.headers.location, page)
  t.notMatch(created.body, /whsec_/, 'the redirect carries no secret')
  const [row] = await app.repos.webhooks.list(ws.project.id)
  t.ok(row, 'created')
  // The table holds it sealed: what the page shows is what the stored value opens to.
  const stored = (id: string, sealed: string) => app.secrets.box.open(sealed, sealContexts.webhook(id))
  t.match(row!.secret, /^enc:v1:/, 'stored sealed')
  const shown = await owner.get(page)
  const secret = secretOf(shown.body)
  t.equal(secret, stored(row!.id, row!.secret), 'the secret is shown')
  t.match(shown.body, /shown only this once/)
  t.match(shown.body, 'http://127.0.0.1:9/hook')
  const again = await owner.get(page)
  t.notOk(secretOf(again.body), 'a reload does not show it again')
  t.notMatch(again.body, secret!)

  // Two events from checkboxes, and a refused URL (a flash; nothing created).
  const csrf = csrfOf(again.body)
  const two = await app.inject({ method: 'POST', url: page, headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' }, payload: `_csrf=${encodeURIComponent(csrf)}&url=${encodeURIComponent('http://127.0.0.1:9/two')}&events=memory.added&events=project.updated`, remoteAddress: '10.0.8.1' })
  t.equal(two.statusCode, 303)
  t.same((await app.repos.webhooks.list(ws.project.id)).map((w) => w.events), [['opportunity.submitted'], ['memory.added', 'project.updated']])
  await owner.get(page) // shows (and clears) the second secret
  const refused = await owner.submit(page, page, { url: 'ftp://example.com', events: 'memory.added' })
  t.equal(refused.statusCode, 303)
  t.match((await owner.get(page)).body, /must use https/, 'the refusal is shown')
  t.equal((await app.repos.webhooks.list(ws.project.id)).length, 2, 'nothing more was created')

  // A test message, in the delivery log; redeliver it.
  const test = await owner.submit(page, `${page}/${row!.id}/test`, {})
  t.equal(test.headers.location, `${page}?webhook=${row!.id}`)
  const log = await owner.get(`${page}?webhook=${row!.id}`)
  t.match(log.body, /A test message is on its way/)
  const message = /data-delivery-id="(msg_[0-9A-Za-z]+)"/.exec(log.body)?.[1]
  t.ok(message, 'the delivery log lists the test message')
  t.match(log.body, 'webhook.test')
  const redelivered = await owner.submit(page, `${page}/${row!.id}/deliveries/${message}/redeliver`, {})
  t.equal(redelivered.statusCode, 303)
  t.match((await owner.get(`${page}?webhook=${row!.id}`)).body, /sent again, with the same webhook-id/)

  // Rotate: a new secret, shown once.
  await owner.submit(page, `${page}/${row!.id}/rotate`, {})
  const rotated = secretOf((await owner.get(`${page}?webhook=${row!.id}`)).body)
  t.match(rotated, /^whsec_/)
  t.not(rotated, secret)
  t.equal(stored(row!.id, (await app.repos.webhooks.find(row!.id))!.secret), rotated)

  // The failing warning.
  await app.db.update(webhooks).set({ failing: true, consecutiveFailures: 6 }).where(eq(webhooks.id, row!.id))
  const warned = await owner.get(page)
  t.match(warned.body, /class="flash error webhook-failing"/)
  t.match(warned.body, /keep failing \(6 attempts in a row\)/)

  // A webhook the worker disabled (a 410): the page says why and offers to enable it again.
  await app.db.update(webhooks).set({ enabled: false, disabledReason: 'The receiver answered 410 Gone on 2026-11-25T09:00:00.000Z: it asked for no more messages.' }).where(eq(webhooks.id, row!.id))
  const disabled = await owner.get(page)
  t.match(disabled.body, /class="flash error webhook-disabled"/)
  t.match(disabled.body, /are disabled: The receiver answered 410 Gone on 2026-11-25T09:00:00.000Z/)
  t.match(disabled.body, /by the receiver \(410 Gone\)/)
  t.match(disabled.body, `action="${page}/${row!.id}/enable"`, 'an Enable button')
  const enabledAgain = await owner.submit(page, `${page}/${row!.id}/enable`, {})
  t.equal(enabledAgain.statusCode, 303)
  t.match(await app.repos.webhooks.find(row!.id), { enabled: true, disabledReason: null, failing: false }, 'enabled, the reason and the failing state cleared')
  const afterEnable = await owner.get(`${page}?webhook=${row!.id}`)
  t.match(afterEnable.body, /enabled again/)
  t.notMatch(afterEnable.body, /webhook-disabled/)
  t.notMatch(afterEnable.body, `action="${page}/${row!.id}/enable"`, 'no Enable button for an enabled webhook')

  // Format, signatures and a rate limit from the form; the public key shown, never the signing key.
  const slack = await owner.submit(page, page, { url: 'http://127.0.0.1:9/slack', events: 'alert.triggered', format: 'slack', signatures: 'v1a', rate_limit: '5' })
  t.equal(slack.statusCode, 303)
  const made = (await app.repos.webhooks.list(ws.project.id)).find((w) => w.url === 'http://127.0.0.1:9/slack')
  t.match(made, { format: 'slack', signatureSchemes: ['v1a'], rateLimit: 5, publicKey: /^whpk_/ })
  const shownSlack = await owner.get(page)
  t.match(shownSlack.body, /Slack message/)
  t.match(shownSlack.body, /signed v1a · at most 5\/s/)
  t.match(shownSlack.body, made!.publicKey!, 'the public key is shown')
  t.notMatch(shownSlack.body, /whsk_/)
  const badRate = await owner.submit(page, page, { url: 'http://127.0.0.1:9/bad', events: 'alert.triggered', rate_limit: '0' })
  t.equal(badRate.statusCode, 303)
  t.match((await owner.get(page)).body, /rate_limit/, 'a refused rate limit is shown')
  t.notOk((await app.repos.webhooks.list(ws.project.id)).some((w) => w.url === 'http://127.0.0.1:9/bad'), 'and nothing is created')

  // Through another project's path, nothing happens.
  const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second' })
  const elsewhere = await owner.submit(page, `/console/projects/${second.slug}/webhooks/${row!.id}/delete`, {})
  t.equal(elsewhere.statusCode, 303)
  t.ok(await app.repos.webhooks.find(row!.id), 'not deleted through another project')
  t.equal((await owner.get(`/console/projects/${second.slug}/webhooks/${row!.id}/delete`)).statusCode, 404, 'nor asked about there')

  // A viewer is refused.
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const v = new Agent(app, '10.0.8.2')
  await v.signIn(viewer.user.email, viewer.user.password)
  const denied = await v.get(page)
  t.equal(denied.statusCode, 403)
  t.notMatch(denied.body, row!.url)
  t.notMatch((await v.get(`/console/projects/${ws.project.slug}`)).body, `href="${page}"`, 'no link for a viewer')

  t.equal((await v.get(`${page}/${row!.id}/delete`)).statusCode, 403, 'nor asked whether to delete')

  // Delete asks first, as revoking a key does: the list links to a page that names the webhook
  // and says how many undelivered messages go with it; only that page's form deletes.
  const listed = await owner.get(page)
  t.match(listed.body, `href="${page}/${row!.id}/delete"`, 'Delete is a link to the confirmation page')
  t.notMatch(listed.body, `action="${page}/${row!.id}/delete"`, 'not a form that deletes in one click')
  await app.repos.webhooks.enqueueOne(row!.id, 'webhook.test', { data: {} }, new Date())
  const pending = (await app.repos.webhooks.deliveries(row!.id, { status: 'pending', limit: 100, offset: 0 })).total
  t.equal(pending, 2, 'two messages wait (the redelivered test and one more)')
  const confirm = await owner.get(`${page}/${row!.id}/delete`)
  t.equal(confirm.statusCode, 200)
  t.match(confirm.body, /Delete this webhook\?/)
  t.match(confirm.body, 'http://127.0.0.1:9/hook')
  t.match(confirm.body, /2 messages have not been delivered yet/, 'says how many undelivered messages are dropped')
  t.match(confirm.body, `action="${page}/${row!.id}/delete"`)
  t.match(confirm.body, `href="${page}?webhook=${row!.id}"`, 'and offers to cancel')
  t.ok(await app.repos.webhooks.find(row!.id), 'looking at the page deletes nothing')

  const deleted = await owner.submit(`${page}/${row!.id}/delete`, `${page}/${row!.id}/delete`, {})
  t.equal(deleted.headers.location, page)
  t.notOk(await app.repos.webhooks.find(row!.id), 'deleted')
  t.match((await owner.get(page)).body, /The webhook is deleted/)
  t.equal((await owner.get(`${page}/${row!.id}/delete`)).statusCode, 404, 'a deleted webhook has no confirmation page')

  // A webhook with nothing waiting says so.
  const [other] = await app.repos.webhooks.list(ws.project.id)
  const calm = await owner.get(`${page}/${other!.id}/delete`)
  t.match(calm.body, /No message is waiting to be delivered/)
})
