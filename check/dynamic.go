package check

func (c *checker) dynamic() {}
