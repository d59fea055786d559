#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns an XLA AOT executable in text-proto form (`*.executable.pbtxt`: the compiled,
scheduled HloModuleProto, its buffer assignment and statistics) into what xlamem reads and
what it is compared with:

    aot_to_hlo.py EXECUTABLE.pbtxt OUT.hlo [--stats OUT.json]

OUT.hlo is the module as HLO text, scheduled (`is_scheduled=true`, each computation in its
schedule's order). OUT.json has XLA's own figures, summed from the executable's
buffer allocations (argument, constant, output and temp bytes). Only what planning needs is written: shapes with layouts, operands, called
computations, parameter numbers, tuple indices, fusion kinds, and the attributes the reader
requires (constants become zeros of their shape). Standard library only.
"""
import json
import sys


def tokens(text):
    """Text-proto tokens: names, ':', '{', '}', strings and bare values."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == '#':
            while i < n and text[i] != '\n':
                i += 1
        elif c in '{}:<>':
            yield c
            i += 1
        elif c == '"':
            j, out = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == '\\' and j + 1 < n:
                    out.append(text[j:j + 2])
                    j += 2
                else:
                    out.append(text[j])
                    j += 1
            yield ('str', bytes(''.join(out), 'latin-1', 'backslashreplace').decode('unicode_escape'))
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '{}:<>"':
                j += 1
            yield ('word', text[i:j])
            i = j


def parse(text):
    """A message as {field: [values]}: nested messages are dicts, scalars strings."""
    stream = tokens(text)
    stack = [{}]
    pending = None
    for t in stream:
        if t in ('}', '>'):
            stack.pop()
        elif t in ('{', '<'):
            child = {}
            stack[-1].setdefault(pending, []).append(child)
            stack.append(child)
            pending = None
        elif t == ':':
            continue
        elif pending is None:
            pending = t[1]
        else:
            stack[-1].setdefault(pending, []).append(t[1])
            pending = None
    return stack[0]


def one(msg, field, default=None):
    v = msg.get(field)
    return v[0] if v else default


def find_module(root):
    """The HloModuleProto inside an executable, wherever its backend puts it."""
    todo = [root]
    while todo:
        m = todo.pop()
        if 'computations' in m:
            return m
        for vs in m.values():
            todo.extend(v for v in vs if isinstance(v, dict))
    raise SystemExit('no HloModuleProto (computations) in the file')


def shape_text(s):
    t = one(s, 'element_type', 'PRED')
    if t == 'TUPLE':
        return '(' + ', '.join(shape_text(e) for e in s.get('tuple_shapes', [])) + ')'
    if t == 'TOKEN':
        return 'token[]'
    dims = s.get('dimensions', [])
    dynamic = s.get('is_dynamic_dimension', [])
    ds = [('<=' if k < len(dynamic) and dynamic[k] == 'true' else '') + d for k, d in enumerate(dims)]
    out = f'{t.lower()}[{",".join(ds)}]'
    layout = one(s, 'layout')
    if layout is not None and (dims or one(layout, 'memory_space')):
        lt = ','.join(layout.get('minor_to_major', []))
        space = one(layout, 'memory_space')
        if space and space != '0':
            lt += f':S({space})'
        out += '{' + lt + '}'
    return out


def zeros(s):
    """A literal of zeros for an array shape (the reader checks the element count)."""
    dims = [int(d) for d in s.get('dimensions', [])]

    def nest(k):
        if k == len(dims):
            return 'false' if one(s, 'element_type') == 'PRED' else '0'
        return '{' + ', '.join(nest(k + 1) for _ in range(dims[k])) + '}'
    return nest(0)


def instruction_text(ins, names, comp_names, is_root):
    op = one(ins, 'opcode')
    shape = one(ins, 'shape', {})
    operands = ', '.join(names[i] for i in ins.get('operand_ids', []))
    called = [comp_names[c] for c in ins.get('called_computation_ids', [])]
    attrs = []
    if op == 'parameter':
        operands = one(ins, 'parameter_number', '0')
    elif op == 'constant':
        operands = zeros(shape) if one(shape, 'element_type') != 'TUPLE' else '()'
    if op == 'get-tuple-element':
        attrs.append(f'index={one(ins, "tuple_index", "0")}')
    if op == 'fusion':
        attrs.append(f'kind={one(ins, "fusion_kind", "kLoop")}')
        attrs.append(f'calls={called[0]}')
    elif op in ('async-start', 'call'):
        attrs.append(('calls=' if op == 'async-start' else 'to_apply=') + called[0])
    elif op == 'while':
        attrs.append(f'condition={comp_names[one(ins, "condition_computation_id", ins["called_computation_ids"][0])]}')
        attrs.append(f'body={called[-1]}')
    elif op == 'conditional':
        attrs.append('branch_computations={' + ', '.join(called) + '}')
    elif called:
        attrs.append(f'to_apply={called[0]}')
    if op == 'compare':
        attrs.append(f'direction={one(ins, "comparison_direction", "EQ")}')
    if 'dimensions' in ins and op not in ('parameter', 'constant'):
        attrs.append('dimensions={' + ','.join(ins['dimensions']) + '}')
    if op == 'custom-call':
        attrs.append(f'custom_call_target="{one(ins, "custom_call_target", "")}"')
    if op in ('all-reduce', 'all-reduce-start', 'reduce-scatter', 'all-gather', 'all-gather-start', 'all-to-all'):
        attrs.append('replica_groups={}')
    text = f'  {"ROOT " if is_root else ""}{one(ins, "name")} = {shape_text(shape)} {op}({operands})'
    return text + (', ' + ', '.join(attrs) if attrs else '')


def module_text(m):
    comps = m['computations']
    comp_names = {one(c, 'id', '0'): one(c, 'name') for c in comps}  # proto3: 0 is not written
    schedule = {}
    for seq in one(m, 'schedule', {}).get('sequences', []):
        schedule[one(seq, 'key', '0')] = one(seq, 'value', {}).get('instruction_ids', [])
    entry = one(m, 'entry_computation_id', '0')
    out = [f'HloModule {one(m, "name", "aot")}, is_scheduled=true', '']
    for c in comps:
        instrs = c.get('instructions', [])
        names = {one(i, 'id', '0'): one(i, 'name') for i in instrs}
        order = schedule.get(one(c, 'id', '0'))
        by_id = {one(i, 'id', '0'): i for i in instrs}
        if order and set(order) == set(by_id):
            instrs = [by_id[i] for i in order]
        root = one(c, 'root_id', '0')
        out.append(('ENTRY ' if one(c, 'id', '0') == entry else '') + f'{one(c, "name")} {{')
        for ins in instrs:
            out.append(instruction_text(ins, names, comp_names, one(ins, 'id', '0') == root))
        out.append('}')
        out.append('')
    return '\n'.join(out)


def xla_stats(root):
    """XLA's figures, summed from the allocations of the executable's BufferAssignmentProto the way
    PopulateBufferStatsFromAllocations does (thread-local allocations count nowhere)."""
    todo, allocations = [root], None
    while todo and allocations is None:
        m = todo.pop()
        if 'buffer_assignment' in m:
            allocations = one(m, 'buffer_assignment').get('buffer_allocations', [])
        for vs in m.values():
            todo.extend(v for v in vs if isinstance(v, dict))
    if allocations is None:
        raise SystemExit('no buffer_assignment in the file')
    figures = dict.fromkeys(['argument_size_in_bytes', 'constant_size_in_bytes', 'output_size_in_bytes',
                             'temp_size_in_bytes'], 0)
    for a in allocations:
        size = int(one(a, 'size', '0'))
        if one(a, 'is_entry_computation_parameter') == 'true':
            figures['argument_size_in_bytes'] += size
        if one(a, 'is_constant') == 'true':
            figures['constant_size_in_bytes'] += size
        elif one(a, 'maybe_live_out') == 'true':
            figures['output_size_in_bytes'] += size
        elif one(a, 'is_thread_local') != 'true' and one(a, 'is_entry_computation_parameter') != 'true':
            figures['temp_size_in_bytes'] += size
    return figures


def main():
    args = sys.argv[1:]
    if len(args) not in (2, 4) or (len(args) == 4 and args[2] != '--stats'):
        raise SystemExit(__doc__)
    with open(args[0], encoding='utf-8') as f:
        root = parse(f.read())
    with open(args[1], 'w', encoding='utf-8') as f:
        f.write(module_text(find_module(root)))
    if len(args) == 4:
        with open(args[3], 'w', encoding='utf-8') as f:
            json.dump(xla_stats(root), f, indent=1)


if __name__ == '__main__':
    main()
