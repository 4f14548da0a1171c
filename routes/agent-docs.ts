// Public agent documents (spec 4.2), rendered once at start from the registry.
import type { FastifyPluginAsync } from 'fastify'
import { growthSkillMarkdown, llmsTxt, skillMarkdown } from '../docs/agent-docs.ts'

const agentDocs: FastifyPluginAsync<{ publicUrl: string }> = async (app, { publicUrl }) => {
  const tools = app.registry.contracts()
  const documents = [
    { url: '/SKILL.md', type: 'text/markdown', body: skillMarkdown(publicUrl, tools, (name) => app.registry.exampleArgs(name)[0]), what: 'The skill for agents: every tool, how to connect and call it, the errors.' },
    { url: '/skills/growth/SKILL.md', type: 'text/markdown', body: growthSkillMarkdown(publicUrl), what: 'The growth skill: how an agent explores a project for opportunities.' },
    { url: '/llms.txt', type: 'text/plain', body: llmsTxt(publicUrl, tools), what: 'The llms.txt index of the service for language models.' },
  ]
  for (const doc of documents) {
    const response = { 200: { description: doc.what, content: { [doc.type]: { schema: { type: 'string' } } } } }
    app.get(doc.url, { schema: { tags: ['agent documents'], summary: `Public: ${doc.url}`, response } }, async (_req, reply) =>
      reply.type(`${doc.type}; charset=utf-8`).header('cache-control', 'public, max-age=300').send(doc.body)
    )
  }
}

export default agentDocs
