package dsl

// Inspect traverses the tree rooted at n in source order, calling f for
// each node. If f returns false, Inspect skips the node's children. It
// visits File, every Stmt and Expr, and TensorType, Arg and Ident nodes;
// Idents are the names of loop variables, dtypes, backends, functions and
// keyword arguments.
func Inspect(n Node, f func(Node) bool) {
	if isNil(n) || !f(n) {
		return
	}
	visit := func(children ...Node) {
		for _, c := range children {
			Inspect(c, f)
		}
	}
	switch n := n.(type) {
	case *File:
		for _, s := range n.Stmts {
			visit(s)
		}
	case *Backends:
		for _, id := range n.Names {
			visit(id)
		}
	case *Place:
		visit(n.Pattern, n.On)
	case *Set:
		visit(n.Name, n.Value)
	case *Dim:
		visit(n.Name, n.Value)
	case *Param:
		visit(n.Name, n.Value)
	case *Decl:
		visit(n.Name, n.Type, n.Fill, n.On, n.Or)
	case *TensorType:
		visit(n.DType)
		for _, a := range n.FlagArgs {
			visit(a)
		}
		for _, d := range n.Shape {
			visit(d)
		}
	case *Output:
		visit(n.Name, n.Value, n.On)
	case *For:
		visit(n.Var, n.From, n.To)
		for _, s := range n.Body {
			visit(s)
		}
	case *If:
		visit(n.Cond)
		for _, s := range n.Body {
			visit(s)
		}
	case *Assign:
		visit(n.Name, n.Value, n.On)
	case *CallStmt:
		visit(n.Call, n.On)
	case *Call:
		visit(n.Func)
		for _, a := range n.Args {
			visit(a)
		}
	case *Arg:
		visit(n.Key, n.Value)
	case *Binary:
		visit(n.X, n.Y)
	case *Unary:
		visit(n.X)
	}
}

// isNil reports whether n is nil or a nil pointer in an interface.
func isNil(n Node) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *Ident:
		return n == nil
	case *Name:
		return n == nil
	case *TensorType:
		return n == nil
	case *Call:
		return n == nil
	case *Arg:
		return n == nil
	}
	return false
}
