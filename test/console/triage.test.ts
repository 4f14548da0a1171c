// Triage on an opportunity's page (issue 28): similar ones with "Merge into this", the merged
// reports with Unmerge, the banner of a merged one (no review, tag or assign form), tags added and
// removed, the assignee chosen or "me" — each a plain CSRF form that runs its operation and comes
// back with a message; a stale version is refused with the review form's kind of message and
// changes nothing; a viewer is refused. And the board: its tag and assignee filters, cards with
// tags, assignee and ×N reports, and the saved views menu.
import t from 'tap'
import { addMember, bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'

const app = await buildTestApp(t)
const ws = await seedWorkspace(app)
const reviewer = await addMember(app, ws.project.id, 'reviewer', `ana.lopez-${Date.now()}@example.com`)
const viewer = await addMember(app, ws.project.id, 'viewer')
const owner = new Agent(app)
await owner.signIn(ws.user.email, ws.user.password)
const slug = ws.project.slug
const api = `/api/v1/mcp/projects/${ws.project.id}/opportunities`

const submit = async (text: string) => {
  const res = await app.inject({ method: 'POST', url: api, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'potential_user_opportunity', key_information: text, reason: `Why: ${text}`, suggested_action: 'Write back.' } })
  if (res.statusCode !== 201) throw new Error(`submit: ${res.statusCode} ${res.body}`)
  return res.json().event_id as string
}
/** The opportunity as REST answers it. */
const rest = async (id: string) => (await app.inject({ method: 'GET', url: `${api}/${id}`, headers: bearer(ws.keys.mcp) })).json()
const page = (id: string) => `/console/projects/${slug}/opportunities/${id}`
const action = (id: string, what: string) => `${page(id)}/${what}`
/** Submits a form of the opportunity's page (its CSRF token), coming back to the page. */
const send = async (agent: Agent, id: string, what: string, fields: Record<string, string>) => {
  const shown = await agent.get(page(id))
  return agent.post(action(id, what), { _csrf: csrfOf(shown.body), back: page(id), ...fields })
}
const flashOf = async (agent: Agent, location: string) => /<p class="flash (ok|error)" role="status">([^<]*)<\/p>/.exec((await agent.get(location.split('#')[0]!)).body)?.slice(1) ?? []

t.test('similar opportunities: a link and a score each, Merge into this, Unmerge restores', async (t) => {
  const target = await submit('Acme wants SSO and audit logs for 40 seats')
  const source = await submit('Acme wants SSO and audit logs for 40 seats, again on the forum')
  await submit('Something else entirely about newsletters')
  const html = (await owner.get(page(target))).body
  t.match(html, /<section class="similar" id="similar"/)
  t.match(html, new RegExp(`<span class="score"[^>]*>\\d+%</span>\\s*<a class="similar-text" href="/console/projects/${slug}/opportunities/${source}\\?back=[^"]+">Acme wants SSO and audit logs for 40 seats, again on the forum</a>`), 'the similar one: its score and a link to its page')
  t.notMatch(html, /newsletters<\/a>/, 'an unlike one is not listed')
  t.match(html, new RegExp(`action="/console/projects/${slug}/opportunities/${target}/merge" class="merge-form"[\\s\\S]*?name="version" value="1"[\\s\\S]*?name="source_id" value="${source}"`), 'Merge into this carries the version and the source')

  const res = await send(owner, target, 'merge', { version: '1', source_id: source })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `${page(target)}#merged`)
  t.same(await flashOf(owner, res.headers.location as string), ['ok', 'Merged: “Acme wants SSO and audit logs for 40 seats, again on the forum” is now one of the 2 reports of this opportunity.'])
  t.match(await rest(target), { report_count: 2, version: 2 }, 'seen over REST')
  t.match(await rest(source), { merged_into: target })

  const merged = (await owner.get(page(target))).body
  t.match(merged, /Merged reports <span class="count">\(1\)<\/span>/, 'the Merged reports section')
  t.match(merged, new RegExp(`<p class="long-text merged-text">Acme wants SSO and audit logs for 40 seats, again on the forum</p>[\\s\\S]*?action="/console/projects/${slug}/opportunities/${source}/unmerge"`), 'the source, whole, with Unmerge')
  t.match(merged, /×2 reports/)
  t.notMatch(merged, new RegExp(`name="source_id" value="${source}"`), 'the merged one is no longer offered as similar')

  // The source's own page: the banner, no review, tag or assign form.
  const sourcePage = (await owner.get(page(source))).body
  t.match(sourcePage, new RegExp(`<div class="merged-banner" role="note">\\s*<p>Merged into <a href="/console/projects/${slug}/opportunities/${target}\\?back=[^"]*">Acme wants SSO and audit logs for 40 seats</a>`), 'the banner links to the target')
  t.match(sourcePage, new RegExp(`action="/console/projects/${slug}/opportunities/${source}/unmerge"`), 'with Unmerge')
  t.notMatch(sourcePage, /class="review-detail"|class="tag-add"|class="assign-form"|class="merge-form"|class="chip-remove"|class="comment-new"/, 'and no form that would be refused (comments neither)')

  const back = await send(owner, target, `../${source}/unmerge`, {})
  t.equal(back.statusCode, 303)
  t.same(await flashOf(owner, back.headers.location as string), ['ok', 'Unmerged: “Acme wants SSO and audit logs for 40 seats, again on the forum” is listed on its own again.'])
  t.match(await rest(target), { report_count: 1, version: 3 }, 'the target has one report again')
  t.match(await rest(source), { merged_into: null, version: 1 }, 'the source restored')
  t.notMatch((await owner.get(page(target))).body, /Merged reports/, 'no Merged reports section any more')
  t.notMatch((await owner.get(page(source))).body, /merged-banner/, 'no banner any more')

  // The banner's Unmerge works too.
  await send(owner, target, 'merge', { source_id: source })
  const fromBanner = await send(owner, source, 'unmerge', {})
  t.equal(fromBanner.headers.location, page(source))
  t.match(await rest(source), { merged_into: null })
})

t.test('tags: add (made on first use, offered afterwards), remove, the version carried', async (t) => {
  const id = await submit('Tag me please')
  let html = (await owner.get(page(id))).body
  t.match(html, /<section class="tags" id="tags"[\s\S]*No tags\./)
  t.match(html, new RegExp(`<form method="post" action="/console/projects/${slug}/opportunities/${id}/tags" class="tag-add"[\\s\\S]*?name="version" value="1"[\\s\\S]*?name="add"[^>]*list="tag-choices-${id}"`))
  const res = await send(owner, id, 'tags', { add: '  Pricing ', version: '1' })
  t.equal(res.headers.location, `${page(id)}#tags`)
  t.same(await flashOf(owner, res.headers.location as string), ['ok', 'Tagged “Pricing”.'])
  t.match(await rest(id), { tags: ['Pricing'], version: 2 })
  await send(owner, id, 'tags', { add: 'enterprise', version: '2' })
  html = (await owner.get(page(id))).body
  t.match(html, /<li class="chip"><span>enterprise<\/span><form[^>]*class="chip-remove"[\s\S]*?name="version" value="3"[\s\S]*?name="remove" value="enterprise"[\s\S]*?aria-label="Remove the tag enterprise"/, 'a chip per tag with its remove form')
  // Another opportunity is offered the project's tags.
  const other = await submit('Another one')
  t.match((await owner.get(page(other))).body, /<datalist id="tag-choices-opp_[^"]+"><option value="enterprise"><\/option><option value="Pricing"><\/option><\/datalist>/)
  const removed = await send(owner, id, 'tags', { remove: 'enterprise', version: '3' })
  t.same(await flashOf(owner, removed.headers.location as string), ['ok', 'Tag “enterprise” removed.'])
  t.match(await rest(id), { tags: ['Pricing'], version: 4 })
  const blank = await send(owner, id, 'tags', { add: '   ', version: '4' })
  t.same(await flashOf(owner, blank.headers.location as string), ['error', 'Type a tag to add first.'])
  const long = await send(owner, id, 'tags', { add: 'x'.repeat(41), version: '4' })
  t.match(await flashOf(owner, long.headers.location as string), ['error', 'Not saved: a tag is at most 40 characters (this one has 41).'])
  t.match(await rest(id), { tags: ['Pricing'], version: 4 }, 'nothing changed')
})

t.test('assignee: the project\'s members, Nobody, Assign to me', async (t) => {
  const id = await submit('Who takes this one?')
  const html = (await owner.get(page(id))).body
  const select = /<select name="assignee"[\s\S]*?<\/select>/.exec(html)?.[0] ?? ''
  t.match(select, /<option value="" selected>Nobody<\/option>/)
  t.match(select, new RegExp(`<option value="${ws.user.id}" >${ws.user.email.replace(/[.]/g, '\\.')} \\(you\\)</option>`), 'the owner, marked as you')
  t.match(select, new RegExp(`<option value="${reviewer.user.id}" >`), 'the reviewer')
  t.match(select, new RegExp(`<option value="${viewer.user.id}" >`), 'the viewer (any role)')
  t.match(html, /<button type="submit" name="me" value="1" class="link assign-me">Assign to me<\/button>/)

  const res = await send(owner, id, 'assign', { assignee: reviewer.user.id, version: '1' })
  t.equal(res.headers.location, `${page(id)}#assignee`)
  t.same(await flashOf(owner, res.headers.location as string), ['ok', `Assigned to ${reviewer.user.email}.`])
  t.match(await rest(id), { assignee: { id: reviewer.user.id }, version: 2 })
  t.match((await owner.get(page(id))).body, /<p class="assignee-now"><span class="avatar" aria-hidden="true">AL<\/span>/, 'the avatar with their initials')
  await send(owner, id, 'assign', { me: '1', assignee: '', version: '2' })
  t.match(await rest(id), { assignee: { id: ws.user.id }, version: 3 }, 'Assign to me')
  t.notMatch((await owner.get(page(id))).body, /class="link assign-me"/, 'no Assign to me when it is yours')
  await send(owner, id, 'assign', { assignee: '', version: '3' })
  t.match(await rest(id), { assignee: null, version: 4 }, 'Nobody')
  const stranger = await send(owner, id, 'assign', { assignee: 'nobody@example.test', version: '4' })
  t.match(await flashOf(owner, stranger.headers.location as string), ['error', /^Not saved: assignee is not a member of this project/])
  t.match(await rest(id), { assignee: null, version: 4 }, 'nothing changed')
})

t.test('a stale version: the conflict message, nothing changed', async (t) => {
  const id = await submit('Changed meanwhile by someone')
  const similarOne = await submit('Changed meanwhile by someone else too')
  const shown = await owner.get(page(id))
  const csrf = csrfOf(shown.body)
  // Someone reviews it over REST after the page was shown (version 1 → 2).
  await app.inject({ method: 'PATCH', url: `${api}/${id}/review`, headers: bearer(ws.keys.mcp), payload: { note: 'meanwhile' } })
  for (const [what, fields] of [['tags', { add: 'late' }], ['assign', { me: '1' }], ['merge', { source_id: similarOne }]] as const) {
    const res = await owner.post(action(id, what), { _csrf: csrf, back: page(id), version: '1', ...fields })
    t.equal(res.statusCode, 303, what)
    const [kind, text] = await flashOf(owner, res.headers.location as string)
    t.equal(kind, 'error', what)
    t.equal(text, 'Not saved: this opportunity was changed by someone else since you opened the page (it is now at version 2). It is shown below as it is now; reload if it is not, then try again.', what)
  }
  t.match(await rest(id), { version: 2, tags: [], assignee: null, report_count: 1 }, 'nothing changed')
  t.match(await rest(similarOne), { merged_into: null })
})

t.test('CSRF is required; a viewer is refused', async (t) => {
  const id = await submit('Guarded')
  for (const [what, fields] of [['tags', { add: 'x' }], ['assign', { me: '1' }], ['merge', { source_id: id }], ['unmerge', {}]] as const) {
    const res = await owner.post(action(id, what), { back: page(id), ...fields })
    t.equal(res.statusCode, 403, `${what} without a form token`)
  }
  const looker = new Agent(app, '10.0.0.9')
  await looker.signIn(viewer.user.email, viewer.user.password)
  const csrf = csrfOf((await looker.get(`/console/projects/${slug}/views`)).body)
  for (const [what, fields] of [['tags', { add: 'x' }], ['assign', { me: '1' }], ['unmerge', {}]] as const) {
    const res = await looker.post(action(id, what), { _csrf: csrf, back: page(id), ...fields })
    t.equal(res.statusCode, 403, `a viewer may not ${what}`)
  }
  t.match(await rest(id), { version: 1, tags: [], assignee: null })
  // A foreign back address is not followed.
  const evil = await send(owner, id, 'tags', { add: 'safe', back: 'https://evil.example/' })
  t.equal(evil.headers.location, `${page(id)}#tags`)
})

t.test('the board: tag and assignee filters, cards with tags, assignee and reports, the views menu', async (t) => {
  const a = await submit('Board card with tags and an assignee')
  const b = await submit('Board card with tags and an assignee, reported twice')
  const c = await submit('Board card nobody has')
  await send(owner, a, 'tags', { add: 'board-one' })
  await send(owner, a, 'tags', { add: 'board-two' })
  await send(owner, a, 'assign', { assignee: reviewer.user.id })
  await send(owner, c, 'tags', { add: 'board-one' })
  await send(owner, a, 'merge', { source_id: b })
  const board = `/console/projects/${slug}/opportunities`
  const html = (await owner.get(board)).body
  const card = new RegExp(`<article class="mini" id="${a}"[\\s\\S]*?</article>`).exec(html)?.[0] ?? ''
  t.match(card, /<span class="badge reports" title="2 reports merged into one">×2<span class="sr-only"> reports<\/span><\/span>/, '×2 reports')
  t.match(card, /<span class="chip-sm">board-one<\/span><span class="chip-sm">board-two<\/span>/, 'its tags')
  t.match(card, new RegExp(`<span class="avatar" title="Assigned to ${reviewer.user.email.replace(/[.]/g, '\\.')}">AL`), 'its assignee')
  t.match(card, new RegExp(`data-assignee="${reviewer.user.id}"`))
  t.notMatch(html, new RegExp(`id="${b}"`), 'the merged one is not on the board')
  t.match(html, /<select name="tag">[\s\S]*<option value="board-one" >board-one<\/option>/, 'the tag filter offers the project\'s tags')
  t.match(html, /<select name="assignee">[\s\S]*<option value="me" >me<\/option>[\s\S]*<option value="none" >nobody<\/option>/, 'the assignee filter')
  t.match(html, /<details class="views-menu">/, 'the views menu')
  t.match(html, /data-me="usr_/, 'the board knows who is signed in (for `a`)')

  const byTag = (await owner.get(`${board}?tag=board-one`)).body
  t.match(byTag, new RegExp(`id="${a}"`))
  t.match(byTag, new RegExp(`id="${c}"`))
  t.equal([...byTag.matchAll(/<article class="mini" id="(opp_[^"]+)"/g)].length, 2, 'only the tagged ones')
  t.match(byTag, /<option value="board-one" selected>board-one<\/option>/)
  const byAssignee = (await owner.get(`${board}?assignee=${reviewer.user.id}`)).body
  t.match(byAssignee, new RegExp(`id="${a}"`))
  t.notMatch(byAssignee, new RegExp(`id="${c}"`))
  t.match(byAssignee, new RegExp(`<option value="${reviewer.user.id}" selected>`))
  const byEmail = (await owner.get(`${board}?assignee=${encodeURIComponent(reviewer.user.email)}`)).body
  t.match(byEmail, new RegExp(`<option value="${reviewer.user.id}" selected>`), 'an email chooses the member too')
  const nobody = (await owner.get(`${board}?assignee=none&tag=board-one`)).body
  t.match(nobody, new RegExp(`id="${c}"`))
  t.notMatch(nobody, new RegExp(`id="${a}"`))
  t.match(nobody, /href="\/console\/projects\/[^/]+\/opportunities\.csv\?[^"]*tag=board-one&amp;assignee=none"/, 'the CSV link keeps them')

  // Saving the filters from the views menu, then it is there, current.
  const fields = Object.fromEntries([...(/<form[^>]*class="save-view"[\s\S]*?<\/form>/.exec(nobody)?.[0] ?? '').matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]))
  t.match(fields, { tag: 'board-one', assignee: 'none' }, 'the save form carries the tag and assignee')
  const saved = await owner.post(`/console/projects/${slug}/views`, { ...fields, name: 'Unassigned board-one' })
  t.equal(saved.statusCode, 303)
  const again = (await owner.get(saved.headers.location as string)).body
  t.match(again, /<summary><span class="views-label">View:<\/span> <strong>Unassigned board-one<\/strong><\/summary>/, 'the menu names the current view')
  t.notMatch(again, new RegExp(`id="${a}"`), 'and the board is filtered')
  const unfiltered = (await owner.get(board)).body
  t.match(unfiltered, /<summary><span class="views-label">Views<\/span> <span class="count">1<\/span><\/summary>/)
  t.match(unfiltered, /<a href="\/console\/projects\/[^"]+\/opportunities\?tag=board-one&amp;assignee=none">Unassigned board-one<\/a>/, 'a link to the board with its filters')
})
