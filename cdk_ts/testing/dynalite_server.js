// Runs dynalite's own command line with one fix, for cdk_ts.testing (_engines.py):
// CreateTable applies its Tags, and the server exits once the process that started it is gone.
//
// Usage: node dynalite_server.js PATH/TO/dynalite/cli.js [dynalite's options...]
//
// DynamoDB's CreateTable takes `Tags`, "a list of key-value pairs to label the table"
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html, request parameter
// Tags): ListTagsOfResource on the new table returns them, with no TagResource call. dynalite 4.0.0 accepts
// the parameter and drops it (validations/createTable.js has no Tags, so the request loses them before
// actions/createTable.js, which never writes the tag store either), so a table created with tags lists none. The rotation tells its own tables by those tags, and would leave every table it created on
// dynalite alone as not its own. The fix is here, in the emulator, not in the code under test: after
// dynalite's CreateTable succeeds, the tags go to the same store its TagResource writes.
'use strict'

const path = require('path')

const [cli, ...args] = process.argv.slice(2)
if (!cli) {
  console.error('usage: node dynalite_server.js PATH/TO/dynalite/cli.js [options]')
  process.exit(2)
}

const root = path.dirname(path.resolve(cli))

// Keep Tags through validation, typed as TagResource's are.
require(path.join(root, 'validations', 'createTable.js')).types.Tags =
  require(path.join(root, 'validations', 'tagResource.js')).types.Tags

// dynalite's index.js loads each action with require('./actions/' + name): replacing the cached module's
// exports before it loads makes the server use the wrapper.
const actionPath = require.resolve(path.join(root, 'actions', 'createTable.js'))
const createTable = require(actionPath)

require.cache[actionPath].exports = function createTableWithTags (store, data, cb) {
  const tags = data.Tags || []
  delete data.Tags // not part of the stored table: DescribeTable carries no Tags
  createTable(store, data, function (err, result) {
    if (err || tags.length === 0) return cb(err, result)
    const puts = tags.map(function (tag) { return { type: 'put', key: tag.Key, value: tag.Value } })
    store.getTagDb(data.TableName).batch(puts, function (tagErr) {
      if (tagErr) return cb(tagErr)
      cb(null, result)
    })
  })
}

// Its own process group keeps it from the terminal's Ctrl-C, and a parent killed outright runs no clean-up:
// when the parent dies, this process is handed to another one and process.ppid changes.
const parent = process.ppid
setInterval(function () { if (process.ppid !== parent) process.exit(0) }, 500).unref()

process.argv = [process.argv[0], path.resolve(cli), ...args]
require(path.resolve(cli))
