// tap's `before` step: builds the migrated template every test database is copied from, once
// for the whole run instead of once per file (see testDatabase in app.ts).
import { pgliteTemplate } from '../../db/client.ts'
import { postgresTemplate } from './app.ts'

const url = process.env.DATABASE_URL
if (url && url !== 'memory://') await postgresTemplate(url)
else await pgliteTemplate()
