-- Pandoc Lua filter of the user guide's build (docs/CMakeLists.txt): the HTML page of a Markdown file
-- of the repository keeps its links working in the installed help folder.
--   docs/<path>.md  -> help/<path>.html     README.md -> help/README.html
--   docs/<file>     -> help/<file> (copied)  anchors (#...) and absolute URLs are kept
-- A link to any other file of the repository (the sample layers, the benchmarks, the tests), which the
-- installed plugin does not have, becomes its text and a note naming the file in the source code.
-- The page's title (metadata pagetitle) is its first level-1 heading.
-- Metadata vbas-source: the page's path in the repository, e.g. docs/algorithms/anonymize.md.

local source -- the page's path in the repository

local function split(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    table.insert(parts, part)
  end
  return parts
end

-- The repository path of target, relative to the folder of source; nil if it leaves the repository.
local function resolve(target)
  local parts = split(source)
  table.remove(parts) -- the page's own name
  for _, part in ipairs(split(target)) do
    if part == ".." then
      if #parts == 0 then
        return nil
      end
      table.remove(parts)
    elseif part ~= "." then
      table.insert(parts, part)
    end
  end
  return table.concat(parts, "/")
end

-- Where a repository path is in the help folder, or nil if it is not there.
local function inHelp(path)
  if path == "README.md" then
    return "README.html"
  end
  local inDocs = path:match("^docs/(.+)$")
  if not inDocs or inDocs:match("^pandoc/") then
    return nil
  end
  return (inDocs:gsub("%.md$", ".html"))
end

-- path (in the help folder) relative to the folder of this page's HTML.
local function relative(path)
  local from = split(inHelp(source))
  table.remove(from)
  local to = split(path)
  local common = 0
  while common < #from and common < #to - 1 and from[common + 1] == to[common + 1] do
    common = common + 1
  end
  local parts = {}
  for _ = common + 1, #from do
    table.insert(parts, "..")
  end
  for i = common + 1, #to do
    table.insert(parts, to[i])
  end
  return table.concat(parts, "/")
end

-- The help folder's address of target, or nil with the repository path it names outside the help.
local function rewrite(target)
  if target == "" or target:match("^#") or target:match("^%a[%w+.-]*:") or target:match("^/") then
    return target
  end
  local path, anchor = target:match("^([^#]*)(.*)$")
  local repositoryPath = resolve(path)
  local helpPath = repositoryPath and inHelp(repositoryPath)
  if not helpPath then
    return nil, repositoryPath or path
  end
  return relative(helpPath) .. anchor
end

-- The link's text and, in a note, the file of the source code it pointed to.
local function sourceNote(content, path)
  local text = pandoc.utils.stringify(content)
  local inlines = pandoc.List:new(content)
  if text == path or text == path:match("([^/]+)/?$") then
    inlines:insert(pandoc.Str(" (in the source code)"))
  else
    inlines:extend({ pandoc.Str(" ("), pandoc.Code(path), pandoc.Str(" in the source code)") })
  end
  return pandoc.Span(inlines, pandoc.Attr("", { "source-file" }))
end

-- A link's target or an image's source (field), pointed at the HTML help; outside it, a note.
local function retarget(element, field, content)
  local target, outside = rewrite(element[field])
  if not target then
    return sourceNote(content, outside)
  end
  element[field] = target
  return element
end

local function link(element)
  return retarget(element, "target", element.content)
end

local function image(element)
  return retarget(element, "src", element.caption)
end

local function title(doc)
  if doc.meta.title or doc.meta.pagetitle then
    return nil
  end
  for _, block in ipairs(doc.blocks) do
    if block.t == "Header" and block.level == 1 then
      doc.meta.pagetitle = pandoc.utils.stringify(block.content)
      return doc
    end
  end
  doc.meta.pagetitle = source:match("([^/]+)%.md$")
  return doc
end

return {
  { Meta = function(meta) source = pandoc.utils.stringify(meta["vbas-source"]) end },
  { Link = link, Image = image },
  { Pandoc = title },
}
