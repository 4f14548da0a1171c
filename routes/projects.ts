// Projects, memories and workspace tool settings over REST (spec 4.2): a table of routes, each an operation.
import type { FastifyPluginAsync } from 'fastify'
import { operationRoute, type OperationRoute } from './operation-route.ts'
import listProjects from '../tools/list-projects.ts'
import createProject from '../tools/create-project.ts'
import getProject from '../tools/get-project.ts'
import updateProject from '../tools/update-project.ts'
import listMemories from '../tools/list-memories.ts'
import addMemory from '../tools/add-memory.ts'
import updateMemory from '../tools/update-memory.ts'
import forgetMemory from '../tools/forget-memory.ts'
import { listWorkspaceTools, setToolEnabled } from '../tools/workspace-tools.ts'

const project = 'project'
const groups: [string, OperationRoute[]][] = [
  ['projects', [
    { method: 'GET', url: '/projects', op: listProjects },
    { method: 'POST', url: '/projects', op: createProject, status: 201 },
    { method: 'GET', url: '/projects/:project', op: getProject, project },
    { method: 'PATCH', url: '/projects/:project', op: updateProject, project },
  ]],
  ['memories', [
    { method: 'GET', url: '/projects/:project/memories', op: listMemories, project },
    { method: 'POST', url: '/projects/:project/memories', op: addMemory, project, status: 201 },
    { method: 'PATCH', url: '/memories/:id', op: updateMemory },
    { method: 'DELETE', url: '/memories/:id', op: forgetMemory },
  ]],
  ['workspace', [
    { method: 'GET', url: '/workspace/tools', op: listWorkspaceTools },
    { method: 'PUT', url: '/workspace/tools/:name', op: setToolEnabled },
  ]],
]

const projectRoutes: FastifyPluginAsync = async (app) => {
  app.addHook('onRequest', app.authenticate('tools-api'))
  for (const [tag, routes] of groups) {
    for (const route of routes) operationRoute(app, { surface: 'tools-api', tag }, route)
  }
}

export default projectRoutes
