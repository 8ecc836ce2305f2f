-- rulelang in Neovim: `.rules` files get the filetype `rules` and the language server `rulelang lsp`.
-- Works on Neovim 0.7 (Debian 12) and later, without plugins. Put this file in your config (for example
-- ~/.config/nvim/lua/rulelang.lua and `require("rulelang")` in init.lua), or copy its lines into init.lua.
-- Optional: vim.g.rulelang_rulebooks = { "/path/to/rulebooks" } before it runs (docs/authoring.md).

-- Neovim 0.7's filetype.vim calls `*.rules` files "hog" (or udev rules): set ours on every read, so the
-- order of the autocommands does not matter (`setf hog` never overrides a filetype already set).
local group = vim.api.nvim_create_augroup("rulelang", { clear = true })
vim.api.nvim_create_autocmd({ "BufNewFile", "BufRead" }, {
  group = group,
  pattern = "*.rules",
  command = "set filetype=rules",
})
if vim.filetype and vim.filetype.add then
  vim.filetype.add({ extension = { rules = "rules" } })
end

-- The project folder of a buffer: the nearest folder above it holding .git or pyproject.toml.
local function root_of(buf)
  if vim.fs and vim.fs.root then -- Neovim 0.10
    return vim.fs.root(buf, { ".git", "pyproject.toml" })
  end
  local path = vim.api.nvim_buf_get_name(buf)
  local dir = vim.fn.fnamemodify(path, ":p:h")
  local git = vim.fn.finddir(".git", dir .. ";")
  local project = vim.fn.findfile("pyproject.toml", dir .. ";")
  local found = git ~= "" and git or project
  if found == "" then
    return dir
  end
  return vim.fn.fnamemodify(found, ":p:h:h")
end

local clients = {} -- root folder -> client id (Neovim 0.7 has no vim.lsp.start to reuse one)

local function start(buf)
  local config = {
    name = "rulelang",
    cmd = { "rulelang", "lsp" },
    root_dir = root_of(buf),
    init_options = { rulebooks = vim.g.rulelang_rulebooks or {} },
  }
  if vim.lsp.start then -- Neovim 0.8 and later: finds or starts the client, and attaches it
    vim.lsp.start(config)
    return
  end
  local id = clients[config.root_dir]
  if id == nil or vim.lsp.get_client_by_id(id) == nil then
    id = vim.lsp.start_client(config)
    clients[config.root_dir] = id
  end
  if id then
    vim.lsp.buf_attach_client(buf, id)
  end
end

vim.api.nvim_create_autocmd("FileType", {
  group = group,
  pattern = "rules",
  callback = function(args)
    start(args.buf)
  end,
})
