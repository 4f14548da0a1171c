import t from 'tap'
import { buildTestApp } from './helpers/app.ts'

t.test('GET /health answers 200 while the database answers, 503 when it does not', async (t) => {
  const app = await buildTestApp(t)
  const ok = await app.inject({ method: 'GET', url: '/health' })
  t.equal(ok.statusCode, 200)
  t.same(ok.json(), { status: 'ok' })

  await app.database.close()
  const down = await app.inject({ method: 'GET', url: '/health' })
  t.equal(down.statusCode, 503)
  t.equal(down.json().error.code, 'unavailable')
})
