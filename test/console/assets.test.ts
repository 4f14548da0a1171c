// The console's static files: its stylesheet, script and icon (every page links the icon, so a
// browser never asks for a /favicon.ico that is not there), and nothing else by that route.
import t from 'tap'
import { buildTestApp } from '../helpers/app.ts'

t.test('console assets', async (t) => {
  const app = await buildTestApp(t)
  const cases = [
    ['console.css', /^text\/css/],
    ['console.js', /^text\/javascript/],
    ['favicon.svg', /^image\/svg\+xml/],
  ] as const
  for (const [file, type] of cases) {
    const res = await app.inject({ url: `/console/assets/${file}` })
    t.equal(res.statusCode, 200, file)
    t.match(res.headers['content-type'], type, `${file}: its type`)
    t.match(res.headers['cache-control'], /max-age=\d+/, `${file}: cached`)
    t.ok(res.body.length > 100, `${file}: not empty`)
  }
  t.match((await app.inject({ url: '/console/assets/favicon.svg' })).body, /^<svg /)
  for (const file of ['nope.css', '..%2Fconsole.css', 'layout.eta']) {
    t.equal((await app.inject({ url: `/console/assets/${file}` })).statusCode, 404, `${file}: 404`)
  }
  const login = await app.inject({ url: '/console/login' })
  t.match(login.body, /<link rel="icon" href="\/console\/assets\/favicon.svg" type="image\/svg\+xml">/, 'pages link the icon')
})
