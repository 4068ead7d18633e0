package check

func (c *checker) static() {}
