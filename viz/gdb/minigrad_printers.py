# gdb pretty-printers for minigrad::Tensor and minigrad::nn::Module (and every module class).
#
#   (gdb) source /usr/local/share/minigrad/gdb/minigrad_printers.py    # once, or in ~/.gdbinit
#   (gdb) print x
#   $1 = Tensor(shape=(2, 3), dtype=float32, values=[1, 2, 3, 4, 5, ...], grad_fn=MulBackward0)
#   (gdb) print model
#   $2 = Attention(parameters: W_q.weight (3, 3), W_k.weight (3, 3); children: W_q, W_k)
#
# A tensor's insides (TensorImpl) are private: gdb sees them when minigrad was built with debug
# information (-g: CMAKE_BUILD_TYPE=Debug or RelWithDebInfo); otherwise it prints the address and
# says so. grad_fn's name is asked from the running program (Node::name()), so a core file shows
# the node's address instead.
import gdb

_DTYPES = {0: ("bool", "bool"), 1: ("int64", "long"), 2: ("float32", "float"), 3: ("float64", "double")}
_SHOWN = 6  # values printed before "..."


def _std_string(v):
    return v["_M_dataplus"]["_M_p"].string(length=int(v["_M_string_length"]))


def _vector(v):
    start, finish = v["_M_impl"]["_M_start"], v["_M_impl"]["_M_finish"]
    return [(start + i).dereference() for i in range(int(finish - start))]


def _dims(shape):  # minigrad::Shape
    data = shape["data_"]
    return [int(data[i]) for i in range(int(shape["size_"]))]


def _shape_str(dims):
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _number(x, dtype):
    if dtype == 0:
        return "True" if int(x) else "False"
    if dtype == 1:
        return str(int(x))
    return "%.4g" % float(x)


def _node_name(node):
    # Node::name() through the vtable: in the Itanium C++ ABI the virtual ~Node takes slots 0 and 1
    # and name(), declared next in autograd.h, slot 2. (`node->name()` would work too, but gdb
    # then looks for the RTTI of the node's class, which a lambda's class has not, and warns.)
    call = ("((std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
            "(*)(const minigrad::Node*))(*(void***)%d)[2])((const minigrad::Node*)%d)")
    try:
        return _std_string(gdb.parse_and_eval(call % (int(node), int(node))))
    except gdb.error:
        return "<node at 0x%x>" % int(node)


class TensorPrinter:
    def __init__(self, val):
        self.val = val

    def to_string(self):
        ptr = self.val["impl_"]["_M_ptr"]
        if int(ptr) == 0:
            return "Tensor(undefined)"
        try:
            impl = ptr.dereference()
            dims = _dims(impl["shape"])
        except gdb.error:
            return "Tensor(at 0x%x; build minigrad with -g to see its shape and values)" % int(ptr)
        strides = _dims(impl["strides"])
        dtype = int(impl["dtype"])
        name, ctype = _DTYPES.get(dtype, ("dtype %d" % dtype, "char"))
        data = impl["storage"]["_M_ptr"]["data"].cast(gdb.lookup_type(ctype).pointer())
        data = data + int(impl["offset"])
        numel = 1
        for d in dims:
            numel *= d
        values = []
        for flat in range(min(numel, _SHOWN)):
            offset, rest = 0, flat
            for d, s in zip(reversed(dims), reversed(strides)):
                offset += (rest % d) * s
                rest //= d
            values.append(_number((data + offset).dereference(), dtype))
        text = "Tensor(shape=%s, dtype=%s, values=[%s%s]" % (
            _shape_str(dims), name, ", ".join(values), ", ..." if numel > _SHOWN else "")
        grad_fn = impl["grad_fn"]["_M_ptr"]
        if int(grad_fn) != 0:
            text += ", grad_fn=" + _node_name(grad_fn)
        elif bool(impl["requires_grad"]):
            text += ", requires_grad=true"
        return text + ")"


def _is_module(t):
    t = t.strip_typedefs()
    if t.code != gdb.TYPE_CODE_STRUCT:
        return False
    if t.tag == "minigrad::nn::Module":
        return True
    return any(f.is_base_class and _is_module(f.type) for f in t.fields())


class ModulePrinter:
    def __init__(self, val):
        self.val = val.cast(gdb.lookup_type("minigrad::nn::Module"))

    def _parameters(self, module, prefix, out):
        for pair in _vector(module["parameters_"]):
            shape = "(undefined)"
            ptr = pair["second"]["impl_"]["_M_ptr"]
            try:
                shape = _shape_str(_dims(ptr.dereference()["shape"]))
            except gdb.error:
                pass
            out.append(prefix + _std_string(pair["first"]) + " " + shape)
        for child in _vector(module["children_"]):
            name = _std_string(child["name"])
            self._parameters(child["module"].dereference(), prefix + name + ".", out)

    def to_string(self):
        params = []
        self._parameters(self.val, "", params)
        children = [_std_string(c["name"]) for c in _vector(self.val["children_"])]
        return "%s(parameters: %s; children: %s)" % (
            _std_string(self.val["type_name_"]), ", ".join(params) or "none",
            ", ".join(children) or "none")


def _lookup(val):
    t = val.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_REF:
        t = t.target().strip_typedefs()
    if t.tag == "minigrad::Tensor":
        return TensorPrinter(val)
    if _is_module(t):
        return ModulePrinter(val)
    return None


gdb.pretty_printers.append(_lookup)
