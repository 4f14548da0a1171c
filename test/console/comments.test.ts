// Comments in the console over HTTP: the thread page (views/comments.eta), a form post that
// comments, replies, edits and deletes and comes back to its `back` address; the CSRF token
// required; a viewer sees the thread without forms and is refused a post; `back` kept local.
import t from 'tap'
import { addMember, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'

const app = await buildTestApp(t, { now: fixedClock('2026-11-20T12:00:00.000Z') })
const ws = await seedWorkspace(app, 'Acme')
const viewer = await addMember(app, ws.project.id, 'viewer', 'vic@example.com')
const reviewer = await addMember(app, ws.project.id, 'reviewer', 'rev@example.com')
const eventId = (await app.repos.opportunities.submit({ projectId: ws.project.id, submittedBy: ws.user.id, contributionType: 'potential_user_opportunity', keyInformation: 'A lead', reason: 'r', suggestedAction: 'a', receivedAt: app.now() })).opportunity.event_id
const slug = ws.project.slug
const page = `/console/projects/${slug}/opportunities/${eventId}/comments`
const thread = async () => (await app.repos.comments.thread(ws.project.id, eventId))!

const rev = new Agent(app, '10.0.0.2')
await rev.signIn('rev@example.com', reviewer.user.password)

t.test('a form post comments, replies, edits and deletes, and comes back to `back`', async (t) => {
  let res = await rev.submit(page, page, { body: 'First line\r\nsecond <b>line</b>', back: page })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${page}#comments`)
  const [made] = await thread()
  t.match(made, { body: 'First line\nsecond <b>line</b>', author: { email: 'rev@example.com' }, parent_id: null }, 'CRLF sent as LF')

  const shown = await rev.get(page)
  t.equal(shown.statusCode, 200)
  t.match(shown.body, 'Comment added.', 'the flash message')
  t.match(shown.body, 'First line<br>second &lt;b&gt;line&lt;/b&gt;', 'escaped, line breaks kept')
  t.match(shown.body, `name="parent_id" value="${made!.comment_id}"`, 'a reply form')
  t.match(shown.body, `/console/projects/${slug}/comments/${made!.comment_id}/edit`, 'an edit form on one\'s own comment')

  res = await rev.submit(page, page, { body: 'A reply', parent_id: made!.comment_id, back: page })
  t.equal(res.statusCode, 303)
  t.strictSame((await thread()).map((c) => [c.body, c.parent_id]), [[made!.body, null], ['A reply', made!.comment_id]])

  res = await rev.submit(page, `/console/projects/${slug}/comments/${made!.comment_id}/edit`, { body: 'Edited', back: page })
  t.equal(res.headers.location, `${page}#${made!.comment_id}`)
  t.match((await thread())[0], { body: 'Edited', edited_at: '2026-11-20T12:00:00.000Z' })

  res = await rev.submit(page, `/console/projects/${slug}/comments/${made!.comment_id}/delete`, { back: page })
  t.equal(res.statusCode, 303)
  t.match((await thread())[0], { comment_id: made!.comment_id, deleted: true, body: '' })
  t.match((await rev.get(page)).body, 'This comment was deleted.')

  // A refused body: a flash message, nothing written.
  res = await rev.submit(page, page, { body: '   ', back: page })
  t.equal(res.statusCode, 303)
  t.match((await rev.get(page)).body, 'Not saved: body must contain more than white space')
  t.equal((await thread()).length, 2)
})

t.test('the CSRF token is required', async (t) => {
  const before = (await thread()).length
  const res = await rev.post(page, { body: 'No token', back: page })
  t.equal(res.statusCode, 403)
  const wrong = await rev.post(page, { _csrf: 'nope', body: 'Wrong token', back: page })
  t.equal(wrong.statusCode, 403)
  t.equal((await thread()).length, before, 'nothing written')
})

t.test('a viewer reads the thread without forms and is refused a post', async (t) => {
  const vic = new Agent(app, '10.0.0.3')
  await vic.signIn('vic@example.com', viewer.user.password)
  const shown = await vic.get(page)
  t.equal(shown.statusCode, 200)
  t.match(shown.body, 'A reply')
  t.notMatch(shown.body, 'name="body"', 'no forms')
  const before = (await thread()).length
  const res = await vic.post(page, { _csrf: csrfOf(shown.body), body: 'Viewer comment', back: page })
  t.equal(res.statusCode, 403)
  t.match(res.body, 'review access')
  t.equal((await thread()).length, before, 'nothing written')
})

t.test('`back` must be a console address; another member\'s comment is not theirs to edit', async (t) => {
  const res = await rev.submit(page, page, { body: 'Elsewhere?', back: 'https://evil.example/' })
  t.equal(res.headers.location, `/console/projects/${slug}/opportunities#comments`)
  const owner = new Agent(app, '10.0.0.4')
  await owner.signIn(ws.user.email, ws.user.password)
  const reply = (await thread()).find((c) => c.body === 'A reply')!
  const edit = await owner.submit(page, `/console/projects/${slug}/comments/${reply.comment_id}/edit`, { body: 'Hijacked', back: page })
  t.equal(edit.statusCode, 403)
  const shown = await owner.get(page)
  t.notMatch(shown.body, `/comments/${reply.comment_id}/edit`, 'no edit form on another\'s comment')
  t.match(shown.body, `/comments/${reply.comment_id}/delete`, 'an owner may delete it')
})
